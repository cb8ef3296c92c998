import { onEventBursts, type LogEvent } from './stream.svelte';

/**
 * What a page shows from the API, kept current: fetched when the page opens (and again whenever state the
 * fetcher reads before its first `await` changes — a filter, a page offset), and again, once per burst,
 * when an event the page cares about arrives. Create it while the component initialises: its effects end
 * with the page.
 */
export class LiveData<T> {
  value = $state() as T;
  error = $state('');
  loaded = $state(false);

  constructor(private readonly fetcher: () => Promise<T>, initial: T, relevant: (e: LogEvent) => boolean) {
    this.value = initial;
    $effect(() => { void this.load(); });
    $effect(() => onEventBursts(relevant, () => void this.load()));
  }

  readonly load = async (): Promise<void> => {
    try {
      this.value = await this.fetcher();
      this.error = '';
    } catch (e) {
      this.error = (e as Error).message;
    } finally {
      this.loaded = true;
    }
  };
}
