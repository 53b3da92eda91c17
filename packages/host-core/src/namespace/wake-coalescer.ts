import type { Scheduler } from "../ports/scheduler.js";

/** What a commit says about whom it wakes, beyond the rows it changed. */
export interface CommitScope {
  /** The user who wrote (a push's caller): all of their sockets are woken. */
  user?: string;
  /** An operator's change (a reset, a visibility switch): every socket is woken. */
  everyone?: boolean;
}

/** One wake's worth of commits: whom to skip, and who else must hear of them. */
export interface WakeRound {
  /** The window's one writing client, whose own socket is skipped; null: none is skipped. */
  except: string | null;
  users: Set<string>;
  everyone: boolean;
}

/**
 * At most one `wake` per socket per window. The first commit of a quiet period wakes at once (so
 * a lone write is seen quickly); commits during the window are gathered and wake once when it
 * closes. A socket is skipped only when its client was the window's one writer.
 */
export class WakeCoalescer {
  private windowOpen = false;
  private pending = new Set<string>();
  private users = new Set<string>();
  private everyone = false;

  constructor(
    private readonly namespace: string,
    private readonly windowMs: number,
    private readonly scheduler: Scheduler,
    private readonly send: (round: WakeRound) => void,
  ) {}

  /** Records a commit by these clients; none means a writer that no socket belongs to. */
  notify(writers: Iterable<string>, scope: CommitScope = {}): void {
    let any = false;
    for (const writer of writers) {
      this.pending.add(writer);
      any = true;
    }
    // Client ids are never empty, so "" stands for a writer that no socket belongs to.
    if (!any) this.pending.add("");
    if (scope.user !== undefined) this.users.add(scope.user);
    if (scope.everyone) this.everyone = true;
    if (this.pending.size === 0 || this.windowOpen) return;
    this.flush();
  }

  cancel(): void {
    if (this.windowOpen) this.scheduler.cancel(this.namespace);
    this.windowOpen = false;
    this.pending.clear();
    this.users.clear();
    this.everyone = false;
  }

  /**
   * The namespace closes: what the open window gathered wakes now rather than never (its
   * sockets stay open, and their clients would not hear of those commits), and no window opens.
   */
  close(): void {
    if (this.windowOpen) this.scheduler.cancel(this.namespace);
    this.windowOpen = false;
    if (this.pending.size > 0) this.flush(false);
  }

  private flush(openWindow = true): void {
    const writers = this.pending;
    const round: WakeRound = {
      except: writers.size === 1 ? writers.values().next().value! : null,
      users: this.users,
      everyone: this.everyone,
    };
    this.pending = new Set();
    this.users = new Set();
    this.everyone = false;
    this.send(round);
    if (this.windowMs <= 0 || !openWindow) return;
    this.windowOpen = true;
    this.scheduler.schedule(this.namespace, this.windowMs, () => {
      this.windowOpen = false;
      if (this.pending.size > 0) this.flush();
    });
  }
}
