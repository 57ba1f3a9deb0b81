/**
 * Values an engine computes once and keeps for its life (the OpenAPI document, the dummy password
 * hash). They follow from the engine's configuration alone, so nothing invalidates them; keeping
 * them on the engine rather than in a module means two engines in one process (tests, `next dev`
 * reloads) never share one, and `close()` lets them go with the engine.
 */
export class Memo {
  private readonly values = new Map<string, unknown>();

  get<T>(key: string, make: () => T): T {
    if (this.values.has(key)) return this.values.get(key) as T;
    const value = make();
    this.values.set(key, value);
    return value;
  }
}
