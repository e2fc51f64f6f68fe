/**
 * The sign-in pages' markup (`src/api/sign-in/sign-in-page.ts`): the
 * company sign-in form with `sso.enabled`, and the tenant choice escaping
 * tenants' names (an org tenant's name is chosen by its admins).
 */
import { describe, expect, it } from 'vitest';
import { companyNotice } from '../../../src/api/sign-in/messages.js';
import { signInPage, tenantChoicePage } from '../../../src/api/sign-in/sign-in-page.js';

const view = { returnTo: '/app?x="1"', formToken: 't'.repeat(43), company: true };

describe('the sign-in pages', () => {
  it('offer "sign in with your company" as a GET form to /1/sign-in/sso with the same return_to', () => {
    const html = signInPage(view);
    const company = html.slice(html.indexOf('<h2>'));
    expect(company).toContain('<h2>Sign in with your company</h2>');
    expect(company).toContain('<form method="get" action="/1/sign-in/sso">');
    expect(company).toContain(
      '<input type="hidden" name="return_to" value="/app?x=&quot;1&quot;">',
    );
    expect(company).toMatch(
      /<label for="company-email">[^<]+<\/label>\s*<input id="company-email" name="email" type="email"/,
    );
    // The form token is the password form's alone: a GET carries no secret.
    expect(company).not.toContain('csrf_token');
    expect(signInPage({ ...view, company: false })).not.toContain('/1/sign-in/sso');
  });

  it('escape tenants’ names and ids on the tenant choice', () => {
    const html = tenantChoicePage({
      tenants: [
        { tenantId: 'acme', name: 'Acme <b>&</b> "Sons"' },
        { tenantId: 'x"y', name: "O'Brien" },
      ],
      formToken: 't'.repeat(43),
    });
    expect(html).toContain(
      '<label for="tenant-0">Acme &lt;b&gt;&amp;&lt;/b&gt; &quot;Sons&quot;</label>',
    );
    expect(html).toContain('value="x&quot;y"');
    expect(html).toContain('<label for="tenant-1">O&#39;Brien</label>');
    expect(html).toMatch(/id="tenant-0" name="tenant_id" value="acme" checked autofocus>/);
    expect(html).not.toContain('<b>');
  });

  it('show the company sign-in’s known refusals in words, and nothing a link makes up', () => {
    expect(companyNotice('no_company_sign_in')).toMatch(/no company sign-in for this address/);
    expect(companyNotice('company_sign_in_cancelled')).toMatch(/cancelled/);
    expect(companyNotice('company_sign_in_failed')).toMatch(/did not succeed/);
    for (const made of [undefined, '', '<script>', 'toString', '__proto__', 'constructor'])
      expect(companyNotice(made)).toBeUndefined();
    const html = signInPage({ ...view, error: companyNotice('no_company_sign_in') });
    expect(html).toMatch(/role="alert"[^>]*>[^<]*There is no company sign-in/);
  });
});
