/**
 * A live status line redrawn in place on stderr, a few times a second, only when stderr is a
 * terminal: piped output and logs never see it.
 */
export class ProgressLine {
  private timer: NodeJS.Timeout | undefined;
  private drawn = false;

  constructor(
    private readonly stream: NodeJS.WritableStream & { isTTY?: boolean; columns?: number },
    private readonly render: () => string,
    private readonly intervalMs = 250,
  ) {}

  start(): this {
    if (this.stream.isTTY !== true) return this;
    this.timer = setInterval(() => this.draw(), this.intervalMs);
    this.timer.unref();
    return this;
  }

  private draw(): void {
    const width = Math.max(20, (this.stream.columns ?? 80) - 1);
    this.stream.write(`\r\x1b[2K${this.render().slice(0, width)}`);
    this.drawn = true;
  }

  /** Stops redrawing and clears the line so that the final report starts on a clean line. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.drawn) this.stream.write("\r\x1b[2K");
    this.drawn = false;
  }
}
