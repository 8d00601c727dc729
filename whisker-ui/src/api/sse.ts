// An incremental text/event-stream parser. Chunks may split anywhere (inside a field, between
// "\r" and "\n", inside a multi-byte character): the parser keeps the unfinished tail.

export interface SseEvent {
  event: string;
  data: string;
  id: string | null;
}

export class SseParser {
  private buffer = '';
  private pendingCr = false;
  private data: string[] = [];
  private eventType = '';
  private lastId: string | null = null;
  private hasData = false;

  /** Feeds one decoded chunk; returns the events it completed, in order. */
  push(chunk: string): SseEvent[] {
    const out: SseEvent[] = [];
    if (chunk === '') return out;
    let text = chunk;
    // A CR ending the previous chunk already ended its line; a LF right after it is the same break.
    if (this.pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.pendingCr = false;
    this.buffer += text;
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const c = this.buffer.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      this.line(this.buffer.slice(start, i), out);
      if (c === 13) {
        if (i + 1 < this.buffer.length) {
          if (this.buffer.charCodeAt(i + 1) === 10) i++;
        } else {
          this.pendingCr = true;
        }
      }
      start = i + 1;
    }
    this.buffer = this.buffer.slice(start);
    return out;
  }

  private line(line: string, out: SseEvent[]): void {
    if (line === '') {
      if (this.hasData) {
        out.push({ event: this.eventType || 'message', data: this.data.join('\n'), id: this.lastId });
      }
      this.data = [];
      this.hasData = false;
      this.eventType = '';
      return;
    }
    if (line.startsWith(':')) return; // comment (keep-alive)
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'data':
        this.data.push(value);
        this.hasData = true;
        break;
      case 'event':
        this.eventType = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastId = value;
        break;
      default:
        break; // retry and unknown fields: ignored
    }
  }
}

/** Reads an SSE body (fetch + ReadableStream), calling onEvent for each event until it ends. */
export async function readSse(
  body: ReadableStream<Uint8Array>,
  onEvent: (e: SseEvent) => void,
): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder('utf-8');
  const parser = new SseParser();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    for (const e of parser.push(decoder.decode(value, { stream: true }))) onEvent(e);
  }
  for (const e of parser.push(decoder.decode())) onEvent(e);
}
