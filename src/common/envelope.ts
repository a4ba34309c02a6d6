/** A list result: the envelope interceptor puts `page` into `meta.page`. */
export class Paged<T> {
  constructor(
    readonly items: T[],
    readonly page: { limit: number; next_cursor: string | null; prev_cursor?: string | null },
  ) {}
}

export interface Envelope<T> {
  data: T;
  meta: { request_id: string; page: Paged<unknown>['page'] | null };
}
