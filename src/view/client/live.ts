/**
 * A live page (`eddy view --live`): run 0's payload comes from the page's own server, a stream of
 * whole payloads (`PageIndex.live.events`), each replacing the last. `body[data-live]` says
 * `following` while frames come, `ended` once the run ended, `lost` when the stream broke.
 */
import type { RunPayload } from "../view-data.js";

/** Follows the stream: `show` gets each payload as it comes. */
export function followLive(events: string, show: (payload: RunPayload) => void): void {
  document.body.dataset.live = "following";
  const source = new EventSource(events);
  source.addEventListener("message", (e) => {
    let payload: RunPayload;
    try {
      payload = JSON.parse((e as MessageEvent<string>).data) as RunPayload;
    } catch {
      return; // not a payload: the stream is eddy's own, so this is never expected
    }
    show(payload);
  });
  source.addEventListener("ended", () => {
    document.body.dataset.live = "ended";
    source.close();
  });
  source.addEventListener("error", () => {
    // EventSource reconnects by itself; once the local eddy has stopped, say so.
    if (source.readyState === EventSource.CLOSED) document.body.dataset.live = "lost";
  });
}
