import { describe, expect, expectTypeOf, it, vi } from 'vitest';
import { SUBSCRIPTION_CATEGORIES as CORE_CATEGORIES, type SubscriptionSeries as CoreSubscriptionSeries, type SubscriptionSnapshot as CoreSubscriptionSnapshot, type AccountWindow, type ApiKeyInfo, type DeliveryInfo, type DeliveryDetail as CoreDeliveryDetail, type DeliveryEventType as CoreDeliveryEventType, type WebhookLimits as CoreWebhookLimits, type rotateWebhookSecret, EVENT_TYPES as CORE_EVENT_TYPES, type EventType as CoreEventType, GMP_FIELDS as CORE_FIELDS, GMP_INTERVALS as CORE_INTERVALS, type GmpSeries as CoreGmpSeries, type GmpSnapshot as CoreGmpSnapshot, type Ipo as CoreIpo, type IpoStatus as CoreIpoStatus, type ListResponse, type Plan as CorePlan, type RateWindowName, type UsageRow as CoreUsageRow, type WebhookInfo } from '@ipokit/core';
import type { DeliveryState as CoreDeliveryState } from '@ipokit/core/backend';

import type {
  Account,
  CreatedKey,
  CreatedWebhook,
  Delivery,
  DeliveryEventType,
  DeliveryWithPayload,
  DeliveryState,
  EventType,
  GmpSeries,
  GmpSnapshot,
  Ipo,
  IpoList,
  IpoStatus,
  Key,
  Plan,
  RateWindow,
  RotatedSecret,
  SubscriptionSeries,
  SubscriptionSnapshot,
  UsageRow,
  Webhook,
  WebhookList,
  WebhookPlanLimits,
  WindowName,
} from './app/api.js';

/** An intersection as one object type (expectTypeOf tells `A & B` from the interface that has both). */
type Flat<T> = { [K in keyof T]: T[K] };

// The dashboard restates the wire types it reads (the app is built for the browser apart from
// the packages' sources): each is pinned here to the core's own, so that a change to the API's
// shapes fails this test until the dashboard follows (checked by tsc through tsconfig.test.json,
// and by vitest's expectTypeOf).
describe("the dashboard's wire types are the core's", () => {
  it('as types', () => {
    expectTypeOf<Plan>().toEqualTypeOf<CorePlan>();
    expectTypeOf<WindowName>().toEqualTypeOf<RateWindowName>();
    expectTypeOf<IpoStatus>().toEqualTypeOf<CoreIpoStatus>();
    expectTypeOf<RateWindow>().toEqualTypeOf<AccountWindow>();
    expectTypeOf<Key>().toEqualTypeOf<ApiKeyInfo>();
    expectTypeOf<UsageRow>().toEqualTypeOf<CoreUsageRow>();
    expectTypeOf<Ipo>().toEqualTypeOf<CoreIpo>();
    expectTypeOf<GmpSnapshot>().toEqualTypeOf<CoreGmpSnapshot>();
    expectTypeOf<GmpSeries>().toEqualTypeOf<CoreGmpSeries>();
    expectTypeOf<IpoList>().toEqualTypeOf<ListResponse>();
    expectTypeOf<SubscriptionSnapshot>().toEqualTypeOf<CoreSubscriptionSnapshot>();
    expectTypeOf<SubscriptionSeries>().toEqualTypeOf<CoreSubscriptionSeries>();
    expectTypeOf<Account>().toEqualTypeOf<{ id: string; name: string; plan: CorePlan; gmpAddon: boolean }>();
    expectTypeOf<CreatedKey>().toEqualTypeOf<{ id: string; key: string; prefix: string; label: string; createdAt: string; expiresAt: string | null }>();
    expectTypeOf<EventType>().toEqualTypeOf<CoreEventType>();
    expectTypeOf<DeliveryState>().toEqualTypeOf<CoreDeliveryState>();
    expectTypeOf<Webhook>().toEqualTypeOf<WebhookInfo>();
    // POST /webhooks answers { webhook: { ...listed, secret } }: the secret shown only there.
    expectTypeOf<CreatedWebhook>().toEqualTypeOf<Flat<WebhookInfo & { secret: string }>>();
    expectTypeOf<Delivery>().toEqualTypeOf<DeliveryInfo>();
    // The webhooks page: GET /webhooks with its limits, a delivery's detail, a rotation's answer.
    expectTypeOf<DeliveryEventType>().toEqualTypeOf<CoreDeliveryEventType>();
    expectTypeOf<WebhookPlanLimits>().toEqualTypeOf<CoreWebhookLimits>();
    expectTypeOf<WebhookList>().toEqualTypeOf<{ webhooks: WebhookInfo[]; limits: CoreWebhookLimits }>();
    expectTypeOf<DeliveryWithPayload>().toEqualTypeOf<CoreDeliveryDetail>();
    expectTypeOf<RotatedSecret>().toEqualTypeOf<Awaited<ReturnType<typeof rotateWebhookSecret>>>();
  });

  it('as values', async () => {
    // (the module finds the API from the page's address when it loads)
    vi.stubGlobal('location', { href: 'http://127.0.0.1/account/-/dashboard/' });
    const { EVENT_TYPES, GMP_FIELDS, GMP_INTERVALS, SUBSCRIPTION_CATEGORIES } = await import('./app/api.js');
    expect(SUBSCRIPTION_CATEGORIES).toEqual(CORE_CATEGORIES);
    expect(GMP_INTERVALS).toEqual(CORE_INTERVALS);
    expect(GMP_FIELDS).toEqual(CORE_FIELDS);
    expect(EVENT_TYPES).toEqual(CORE_EVENT_TYPES);
    vi.unstubAllGlobals();
  });
});
