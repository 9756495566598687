import { Type } from '@sinclair/typebox';
import type { Store } from '../../../core/store.ts';
import type { RatingsRecord } from './records.ts';
import { IndexedCollection } from './repository.ts';

export const RatingBody = Type.Object({
  rating: Type.Integer({ description: '1 to 5' }),
  comment: Type.Optional(Type.String({ maxLength: 2000 })),
});

export const RatingView = Type.Object({
  num_stars: Type.Number({ description: 'Average rating, 0 when unrated' }),
  num_ratings: Type.Integer(),
  rating_details: Type.Array(
    Type.Object({
      user: Type.String(),
      rating: Type.Integer(),
      comment: Type.Optional(Type.String()),
      at: Type.String(),
    }),
  ),
});

/** Ratings of servers and skills (`server:/path`, `skill:/skills/x`), one per user. */
export class Ratings {
  readonly index: IndexedCollection<RatingsRecord>;
  constructor(store: Store) {
    this.index = new IndexedCollection<RatingsRecord>(store, 'registry_ratings');
  }

  view(key: string) {
    const rec = this.index.get(key);
    const details = Object.entries(rec?.by_user ?? {}).map(([user, r]) => ({
      user,
      rating: r.rating,
      comment: r.comment,
      at: r.at,
    }));
    const avg = details.length ? details.reduce((s, d) => s + d.rating, 0) / details.length : 0;
    return { num_stars: Math.round(avg * 100) / 100, num_ratings: details.length, rating_details: details };
  }

  average(key: string): number | undefined {
    const v = this.view(key);
    return v.num_ratings ? v.num_stars : undefined;
  }

  async rate(key: string, username: string, rating: number, comment?: string) {
    return this.index.lock(key, async () => {
      const rec = this.index.get(key) ?? { by_user: {} };
      const next: RatingsRecord = {
        by_user: { ...rec.by_user, [username]: { rating, comment, at: new Date().toISOString() } },
      };
      await this.index.set(key, next);
      return this.view(key);
    });
  }

  async remove(key: string): Promise<void> {
    if (this.index.has(key)) await this.index.delete(key);
  }
}
