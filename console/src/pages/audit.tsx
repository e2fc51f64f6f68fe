/**
 * `/console/tenants/{t}/audit`: the tenant's audit events, newest first,
 * filtered by type and time, a page at a time (`GET /1/tenants/{t}/audit`).
 */
import { useState } from 'preact/hooks';
import { get, seg } from '../api';
import type { Me } from '../me';
import { useLoad } from '../parts/load';
import { Empty, Failure, Loading } from '../parts/status';

interface AuditPageAnswer {
  events: Record<string, unknown>[];
  /** The cursor of the next (older) page; null at the end. */
  next: string | null;
  /** The event types this tenant's stream holds (the filter's choices). */
  types: string[];
}

interface Filter {
  type: string;
  since: string;
  until: string;
  before: string | undefined;
}

const seconds = (local: string) =>
  local === '' ? undefined : Math.floor(new Date(local).getTime() / 1000);

function query(filter: Filter): string {
  const params = new URLSearchParams({ limit: '50' });
  if (filter.type !== '') params.set('type', filter.type);
  const since = seconds(filter.since);
  const until = seconds(filter.until);
  if (since !== undefined) params.set('since', String(since));
  if (until !== undefined) params.set('until', String(until));
  if (filter.before !== undefined) params.set('before', filter.before);
  return params.toString();
}

const NO_FILTER: Filter = { type: '', since: '', until: '', before: undefined };

export function AuditPage({ me }: { me: Me }) {
  const [filter, setFilter] = useState<Filter>(NO_FILTER);
  const path = `/1/tenants/${seg(me.tenant_id)}/audit?${query(filter)}`;
  const [loaded] = useLoad(() => get<AuditPageAnswer>(path), [path]);
  const apply = (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setFilter({
      type: String(form.get('type') ?? ''),
      since: String(form.get('since') ?? ''),
      until: String(form.get('until') ?? ''),
      before: undefined,
    });
  };
  const types = loaded.state === 'ready' ? loaded.value.types : [];
  return (
    <>
      <h1>Audit events of {me.tenant_name}</h1>
      <form onSubmit={apply} class="filters">
        <label for="audit-type">Type</label>
        <select id="audit-type" name="type" value={filter.type}>
          <option value="">any</option>
          {types.map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </select>
        <label for="audit-since">From</label>
        <input id="audit-since" name="since" type="datetime-local" value={filter.since} />
        <label for="audit-until">Until</label>
        <input id="audit-until" name="until" type="datetime-local" value={filter.until} />
        <button type="submit">Show</button>
      </form>
      {loaded.state === 'loading' ? <Loading what="the events" /> : null}
      {loaded.state === 'failed' ? <Failure error={loaded.error} /> : null}
      {loaded.state === 'ready' && loaded.value.events.length === 0 ? (
        <Empty>No events{filter === NO_FILTER ? ' yet' : ' match these filters'}.</Empty>
      ) : null}
      {loaded.state === 'ready' && loaded.value.events.length > 0 ? (
        <>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Event</th>
                  <th scope="col">By</th>
                  <th scope="col">Details</th>
                </tr>
              </thead>
              <tbody>
                {loaded.value.events.map((e, i) => (
                  <tr key={`${String(e['time'])}-${i}`}>
                    <td>{new Date(String(e['time'])).toLocaleString()}</td>
                    <td>{String(e['event'])}</td>
                    <td>{actorOf(e)}</td>
                    <td>
                      <code>{details(e)}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {loaded.value.next === null ? null : (
            <button
              type="button"
              class="secondary"
              onClick={() => setFilter({ ...filter, before: loaded.value.next ?? undefined })}
            >
              Older events
            </button>
          )}
        </>
      ) : null}
    </>
  );
}

function actorOf(event: Record<string, unknown>): string {
  const actor = typeof event['actor'] === 'string' ? event['actor'] : '—';
  return event['source'] === 'api' ? actor : `${actor} (${String(event['source'])})`;
}

function details(event: Record<string, unknown>): string {
  const rest = Object.entries(event).filter(
    ([k]) => !['time', 'event', 'actor', 'source', 'tenant_id', 'request_id'].includes(k),
  );
  return rest.map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' ');
}
