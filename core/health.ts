/** What a provider's or the store's healthcheck() answers (spec: /readyz checks). */
export type Health = 'ok' | 'reachable' | 'down';
