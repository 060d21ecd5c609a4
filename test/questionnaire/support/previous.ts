/**
 * A previous answers file as a person would keep it: written by hand (its own layout and
 * `$schema`), every question answered, and fields no question asks about (hand-written
 * rules, headers, rollout, traffic headroom and burst sources, plan bursts, a provider's
 * safety fraction, an endpoint's cost, the project description, the billing source), and the
 * limiters already in place as an earlier init found them.
 */
export const PREVIOUS_TEXT = `{
  "$schema": "./node_modules/rl-design/schemas/answers.schema.json",
  "project": { "name": "Acme Orders API", "description": "Multi-tenant order management API." },
  "output": { "format": "markdown", "layout": "single", "path": "docs/limits.md", "codeDir": "ratelimit" },
  "goals": ["overload", "abuse", "fairness", "quotas"],
  "stack": {
    "language": "TypeScript", "framework": "express", "topology": "horizontal", "instances": 6,
    "gateway": "nginx", "store": "redis-cluster", "trustedProxies": ["10.20.0.0/16"]
  },
  "identities": ["api-key", "tenant", "user", "ip"],
  "endpoints": [
    { "name": "login", "method": "POST", "route": "/v1/auth/login", "class": "auth", "authKind": "login" },
    { "name": "list-orders", "method": "GET", "route": "/v1/orders", "class": "read" },
    { "name": "export-orders", "method": "POST", "route": "/v1/exports", "class": "export", "cost": 25 }
  ],
  "traffic": {
    "typicalRps": 800, "peakRps": 2400, "headroom": 2, "burstiness": "high",
    "burstSources": ["mobile app sync at 09:00"], "distinctClients": 5000, "distinctTenants": 1200, "distinctUsers": 90000
  },
  "plans": [
    { "name": "Free", "rate": { "requests": 60, "per": "minute" }, "quota": 10000 },
    { "name": "Pro", "rate": { "requests": 600, "per": "minute" }, "burst": 200, "quota": 1000000, "exhaustion": "soft-warning" }
  ],
  "quotas": { "reset": { "kind": "calendar", "period": "month", "timeZone": "Europe/Berlin" }, "exhaustion": "hard", "billingSource": "metering-system" },
  "failure": { "byClass": { "auth": "closed", "read": "open", "export": "closed" } },
  "outbound": [
    { "name": "Stripe", "limit": { "requests": 100, "per": "second" } },
    { "name": "SendGrid", "limit": { "requests": 600, "per": "minute" }, "safetyFraction": 0.8 }
  ],
  "headers": { "convention": "ietf-trio", "docsUrl": "https://developer.acme.example/docs/rate-limits" },
  "rollout": { "shadowDays": 14 },
  "rules": [{ "id": "export-per-tenant-night", "endpointClass": "export", "identity": "tenant", "algorithm": "fixed-window", "rate": { "requests": 100, "per": "hour" } }],
  "existing": { "limiters": [{ "kind": "express-rate-limit", "name": "loginLimiter", "source": "src/app.js:16", "method": "POST", "path": "/v1/auth/login", "match": "exact", "keyedOn": "ip", "limit": 5, "windowSeconds": 60 }] }
}
`;

export const PREVIOUS = JSON.parse(PREVIOUS_TEXT) as Record<string, unknown>;
