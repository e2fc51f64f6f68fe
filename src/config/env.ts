/**
 * `${VAR}` expansion in configuration values, so secrets stay out of the file.
 * `${VAR:-fallback}` uses the fallback when VAR is unset or empty; `$${` is a
 * literal `${`. Only string values are expanded, after YAML parsing, so an
 * environment value can never change the structure of the document.
 */

export interface ExpansionProblem {
  path: (string | number)[];
  message: string;
}

const REFERENCE = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$\{[^}]*\}?/g;

export function expandEnv(
  value: unknown,
  env: NodeJS.ProcessEnv,
  problems: ExpansionProblem[],
  path: (string | number)[] = [],
): unknown {
  if (typeof value === 'string') return expandString(value, env, problems, path);
  if (Array.isArray(value)) return value.map((v, i) => expandEnv(v, env, problems, [...path, i]));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, expandEnv(v, env, problems, [...path, k])]),
    );
  }
  return value;
}

function expandString(
  value: string,
  env: NodeJS.ProcessEnv,
  problems: ExpansionProblem[],
  path: (string | number)[],
): string {
  return value.replace(
    REFERENCE,
    (match, name: string | undefined, fallback: string | undefined) => {
      if (match === '$${') return '${';
      if (name === undefined) {
        problems.push({
          path,
          message: `malformed reference ${match} (use \${NAME} or \${NAME:-default})`,
        });
        return match;
      }
      const found = env[name];
      if (found !== undefined && found !== '') return found;
      if (fallback !== undefined) return fallback;
      problems.push({ path, message: `environment variable ${name} is not set` });
      return '';
    },
  );
}
