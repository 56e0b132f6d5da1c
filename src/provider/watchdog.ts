/**
 * One timer per attempt that enforces the three timeouts (docs/decisions.md #8) and the post-terminal
 * drain. Activity is recorded with a cheap timestamp (`touch()`) instead of re-arming a timer per
 * chunk; when the timer fires it re-arms for the remainder if there was activity since.
 */

export type WatchdogPhase = "connect" | "first_byte" | "idle" | "drain";

/** The abort reason a watchdog uses, so the attempt can tell a timeout from a cancellation. */
export class WatchdogFired {
  constructor(
    readonly phase: WatchdogPhase,
    readonly limitMs: number,
  ) {}
}

/** The timeouts of one attempt, in milliseconds (defaults in `PROVIDER_DEFAULTS`). */
export interface WatchdogLimits {
  connectMs: number;
  firstByteMs: number;
  idleMs: number;
  drainMs: number;
}

export class Watchdog {
  private phase: WatchdogPhase = "connect";
  private lastActivity = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** When the armed timer fires (the `now` clock). */
  private deadline = 0;

  constructor(
    /** What the watchdog aborts when a limit passes (an AbortController, or an attempt's own abort). */
    private readonly controller: Pick<AbortController, "abort">,
    private readonly limits: WatchdogLimits,
    private readonly isBusy: () => boolean,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Enters a phase: its full limit starts now. A timer already armed to fire no later than that
   * is kept (when it fires, it re-arms for the rest), so a request arms two timers, not four.
   */
  start(phase: WatchdogPhase): void {
    this.phase = phase;
    const now = this.now();
    this.lastActivity = now;
    const limit = this.limit();
    if (this.timer !== undefined && this.deadline <= now + limit) return;
    this.arm(limit, now);
  }

  get currentPhase(): WatchdogPhase {
    return this.phase;
  }

  /** Records activity (bytes received). */
  touch(): void {
    this.lastActivity = this.now();
  }

  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private limit(): number {
    switch (this.phase) {
      case "connect":
        return this.limits.connectMs;
      case "first_byte":
        return this.limits.firstByteMs;
      case "idle":
        return this.limits.idleMs;
      case "drain":
        return this.limits.drainMs;
    }
  }

  private arm(ms: number, now = this.now()): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    const delay = Math.max(1, ms);
    this.deadline = now + delay;
    this.timer = setTimeout(this.fire, delay);
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    const limit = this.limit();
    // The idle timeout does not run while a tool runs (docs/decisions.md #8).
    if (this.phase === "idle" && this.isBusy()) {
      this.lastActivity = this.now();
      this.arm(limit);
      return;
    }
    const quiet = this.now() - this.lastActivity;
    if (quiet < limit) {
      this.arm(limit - quiet);
      return;
    }
    this.controller.abort(new WatchdogFired(this.phase, limit));
  };
}
