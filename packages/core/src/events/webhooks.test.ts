import { describe, expect, it } from 'vitest';
import { createAccount } from '../accounts/admin.js';
import { isIpokitError } from '../model/errors.js';
import { EVENT_TYPES } from '../model/types.js';
import { createWebhook, deleteWebhook, getWebhookLimits, listWebhooks, rotateWebhookSecret, sendTestEvent, updateWebhook } from './webhooks.js';
import { referenceStore } from '@ipokit/testing';

// The operator's webhook functions on the reference store: what they check, what they store.

const at = { now: () => new Date(Date.UTC(2026, 10, 24, 9)) };

async function refused(call: Promise<unknown>): Promise<{ code: string; parameter?: string }> {
  const err = await call.then(
    () => null,
    (e: unknown) => e,
  );
  if (!isIpokitError(err)) throw new Error(`expected an IpokitError, got ${String(err)}`);
  return { code: err.code, ...(err.parameter === undefined ? {} : { parameter: err.parameter }) };
}

describe('createWebhook', () => {
  it('stores the endpoint with a new secret, shown once; lists it without the secret, events in the contract order', async () => {
    const store = referenceStore();
    const acct = await createAccount(store, { name: 'Acme', plan: 'pro' });
    const made = await createWebhook(store, { accountId: acct.id, url: 'https://example.com/hooks/ipo?x=1', events: ['gmp.snapshot', 'ipo.created', 'gmp.snapshot'], description: 'alerts' }, at);
    expect(Object.keys(made)).toEqual(['id', 'secret']);
    expect(made.id).toMatch(/^wh_[0-9A-Za-z]{20}$/);
    expect(made.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const listed = await listWebhooks(store, { accountId: acct.id });
    expect(listed).toEqual([
      { id: made.id, url: 'https://example.com/hooks/ipo?x=1', events: ['ipo.created', 'gmp.snapshot'], description: 'alerts', createdAt: '2026-11-24T09:00:00.000Z', disabledAt: null, pausedAt: null },
    ]);
    expect(JSON.stringify(listed)).not.toContain(made.secret);
    expect((await store.getWebhook(made.id))?.secret).toBe(made.secret);
    // every type, no description
    const all = await createWebhook(store, { accountId: acct.id, url: 'http://127.0.0.1:9/hook', events: [...EVENT_TYPES] }, { ...at, webhookAllowedNetworks: ['127.0.0.0/8'] });
    expect((await listWebhooks(store, { accountId: acct.id })).find((h) => h.id === all.id)).toMatchObject({ events: [...EVENT_TYPES], description: null, url: 'http://127.0.0.1:9/hook' });
  });

  it('needs a plan of webhookPlans (default pro): ERR:PLAN otherwise; an unknown account is ERR:NOTFOUND', async () => {
    const store = referenceStore();
    const paid = await createAccount(store, { name: 'Paid', plan: 'paid' });
    const input = { accountId: paid.id, url: 'https://example.com/h', events: ['ipo.created'] };
    expect(await refused(createWebhook(store, input))).toEqual({ code: 'ERR:PLAN' });
    expect((await createWebhook(store, input, { webhookPlans: ['paid', 'pro'] })).id).toMatch(/^wh_/);
    expect(await refused(createWebhook(store, { ...input, accountId: 'acct_nope' }))).toEqual({ code: 'ERR:NOTFOUND' });
    expect(await refused(createWebhook(store, input, { webhookPlans: ['gold' as 'pro'] }))).toEqual({ code: 'ERR:BADPARAM', parameter: 'webhookPlans' });
  });

  it('refuses a url that is not an absolute http: or https: URL, and bad events or description, storing nothing (ERR:BADPARAM)', async () => {
    const store = referenceStore();
    const acct = await createAccount(store, { name: 'Acme', plan: 'pro' });
    const base = { accountId: acct.id, url: 'https://example.com/h', events: ['ipo.created'] };
    for (const [input, parameter] of [
      [{ ...base, url: '/relative' }, 'url'],
      [{ ...base, url: 'example.com/h' }, 'url'],
      [{ ...base, url: 'ftp://example.com/h' }, 'url'],
      [{ ...base, url: 'javascript:alert(1)' }, 'url'],
      [{ ...base, url: 'https://example.com/h#frag' }, 'url'],
      [{ ...base, url: `https://example.com/${'x'.repeat(2_048)}` }, 'url'],
      [{ ...base, url: 7 as unknown as string }, 'url'],
      [{ ...base, events: [] }, 'events'],
      [{ ...base, events: ['ipo.opened'] }, 'events'],
      [{ ...base, events: 'ipo.created' as unknown as string[] }, 'events'],
      [{ ...base, description: 'x'.repeat(201) }, 'description'],
      [{ ...base, description: '\uD800' }, 'description'],
    ] as const) {
      expect(await refused(createWebhook(store, input)), JSON.stringify(input).slice(0, 80)).toEqual({ code: 'ERR:BADPARAM', parameter });
    }
    expect(await listWebhooks(store, { accountId: acct.id })).toEqual([]);
  });
});

/** The 25 URLs of #29 defect 1 that reached inside; the two names are refused at connection (delivery.test.ts). */
const INSIDE_LITERALS = [
  'http://127.0.0.1:8080/hook',
  'http://localhost:8080/hook',
  'http://2130706433:8080/hook',
  'http://0x7f000001:8080/hook',
  'http://0177.0.0.1:8080/hook',
  'http://127.1:8080/hook',
  'http://0.0.0.0:8080/hook',
  'http://[::ffff:127.0.0.1]:8080/hook',
  'http://[::ffff:7f00:1]:8080/hook',
  'http://[::1]:8080/hook',
  'http://10.0.0.5/hook',
  'http://172.16.3.4/hook',
  'http://192.168.1.1/hook',
  'http://169.254.169.254/latest/meta-data/',
  'http://100.64.0.1/hook',
  'http://[fd00::1]/hook',
  'http://[fe80::1]/hook',
  'https://user@example.com/hook',
  'https://alice:s3cret@example.com/hook',
  'https://:s3cret@example.com/hook',
  'https://10.1.2.3/hook',
  'https://LOCALHOST./hook',
  'https://api.localhost/hook',
] as const;

describe('createWebhook and the operator\'s network (docs/spec.md#webhooks, only the public internet)', () => {
  it('refuses URLs aimed inside (address literals in any form, localhost, credentials): ERR:BADPARAM on url, nothing stored', async () => {
    const store = referenceStore();
    const acct = await createAccount(store, { name: 'Acme', plan: 'pro' });
    const accepted: string[] = [];
    for (const url of INSIDE_LITERALS) {
      const err = await createWebhook(store, { accountId: acct.id, url, events: ['ipo.created'] }).then(
        () => null,
        (e: unknown) => e,
      );
      if (!isIpokitError(err)) accepted.push(url);
      else expect({ url, code: err.code, parameter: err.parameter }).toEqual({ url, code: 'ERR:BADPARAM', parameter: 'url' });
    }
    expect(accepted).toEqual([]);
    expect(await listWebhooks(store, { accountId: acct.id })).toEqual([]);
  });

  it('takes names (checked at connection) and public addresses; webhookAllowedNetworks opens exactly its networks, credentials never', async () => {
    const store = referenceStore();
    const acct = await createAccount(store, { name: 'Acme', plan: 'pro' });
    const input = (url: string) => ({ accountId: acct.id, url, events: ['ipo.created'] });
    for (const url of ['https://metadata.google.internal/x', 'http://runsc:8080/hook', 'https://93.184.216.34/h', 'https://[2606:2800:220:1::1]/h']) {
      expect((await createWebhook(store, input(url))).id, url).toMatch(/^wh_/);
    }
    const loopback = { webhookAllowedNetworks: ['127.0.0.0/8', '::1/128'] };
    for (const url of ['http://127.0.0.1:8080/hook', 'http://2130706433:8080/hook', 'http://[::1]:8080/hook', 'http://[::ffff:127.0.0.1]:8080/hook', 'http://localhost:8080/hook']) {
      expect((await createWebhook(store, input(url), loopback)).id, url).toMatch(/^wh_/);
    }
    for (const url of ['http://10.0.0.5/hook', 'http://[fd00::1]/hook', 'http://alice:pw@127.0.0.1:8080/hook']) {
      expect(await refused(createWebhook(store, input(url), loopback)), url).toEqual({ code: 'ERR:BADPARAM', parameter: 'url' });
    }
    expect((await createWebhook(store, input('http://10.1.200.3/hook'), { webhookAllowedNetworks: ['10.1.0.0/16'] })).id).toMatch(/^wh_/);
    expect(await refused(createWebhook(store, input('http://10.2.0.1/hook'), { webhookAllowedNetworks: ['10.1.0.0/16'] }))).toEqual({ code: 'ERR:BADPARAM', parameter: 'url' });
    expect(await refused(createWebhook(store, input('https://example.com/h'), { webhookAllowedNetworks: ['10.1.0.0/33'] }))).toEqual({ code: 'ERR:BADPARAM', parameter: 'webhookAllowedNetworks' });
    // The refusal says why, without echoing the credentials.
    const err = await createWebhook(store, input('https://alice:s3cret@example.com/h')).catch((e: unknown) => e as Error);
    expect((err as Error).message).not.toContain('s3cret');
  });
});

describe('listWebhooks and deleteWebhook', () => {
  it('list an account its own endpoints; delete one; unknown ids are ERR:NOTFOUND', async () => {
    const store = referenceStore();
    const a = await createAccount(store, { name: 'A', plan: 'pro' });
    const b = await createAccount(store, { name: 'B', plan: 'pro' });
    const hook = await createWebhook(store, { accountId: a.id, url: 'https://a.example/h', events: ['ipo.deleted'] }, at);
    expect(await listWebhooks(store, { accountId: b.id })).toEqual([]);
    expect(await refused(listWebhooks(store, { accountId: 'acct_nope' }))).toEqual({ code: 'ERR:NOTFOUND' });
    await deleteWebhook(store, hook.id);
    expect(await listWebhooks(store, { accountId: a.id })).toEqual([]);
    expect(await refused(deleteWebhook(store, hook.id))).toEqual({ code: 'ERR:NOTFOUND' });
    expect(await refused(deleteWebhook(store, ''))).toEqual({ code: 'ERR:BADPARAM', parameter: 'id' });
  });
});

describe('the account holder\'s webhook functions', () => {
  it('check their fields: webhook.test is delivery-only, overlapSeconds 0 to 7 days, paused a boolean; an unknown endpoint is ERR:NOTFOUND', async () => {
    const store = referenceStore();
    const acct = await createAccount(store, { name: 'Acme', plan: 'pro' });
    expect(await refused(createWebhook(store, { accountId: acct.id, url: 'https://example.com/h', events: ['webhook.test'] }, at))).toEqual({ code: 'ERR:BADPARAM', parameter: 'events' });
    const { id } = await createWebhook(store, { accountId: acct.id, url: 'https://example.com/h', events: ['ipo.created'] }, at);
    for (const overlapSeconds of [-1, 604_801, 1.5, Number.NaN, '60' as unknown as number]) {
      expect(await refused(rotateWebhookSecret(store, { id, overlapSeconds }, at))).toEqual({ code: 'ERR:BADPARAM', parameter: 'overlapSeconds' });
    }
    expect(await rotateWebhookSecret(store, { id, overlapSeconds: 0 }, at)).toMatchObject({ previousSecretExpiresAt: '2026-11-24T09:00:00.000Z' });
    expect(await refused(updateWebhook(store, { id, paused: 'yes' as unknown as boolean }))).toEqual({ code: 'ERR:BADPARAM', parameter: 'paused' });
    expect(await refused(updateWebhook(store, { id, events: ['webhook.test'] }))).toEqual({ code: 'ERR:BADPARAM', parameter: 'events' });
    expect(await refused(updateWebhook(store, { id: 'wh_nope', paused: true }))).toEqual({ code: 'ERR:NOTFOUND' });
    expect(await refused(sendTestEvent(store, { webhookId: 'wh_nope' }))).toEqual({ code: 'ERR:NOTFOUND' });
    await updateWebhook(store, { id, paused: true }, at);
    expect(await refused(sendTestEvent(store, { webhookId: id }))).toEqual({ code: 'ERR:BADPARAM', parameter: 'webhookId' });
    expect(await getWebhookLimits(store, { accountId: acct.id })).toEqual({ allowed: true, plans: ['pro'], maxPerAccount: 10, used: 1 });
    expect(await getWebhookLimits(store, { accountId: acct.id }, { maxWebhooksPerAccount: Infinity, webhookPlans: ['paid'] })).toEqual({ allowed: false, plans: ['paid'], maxPerAccount: null, used: 1 });
  });
});
