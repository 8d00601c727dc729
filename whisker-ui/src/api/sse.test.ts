import { describe, expect, it } from 'vitest';
import { SseParser, readSse, type SseEvent } from './sse';

const STREAM = 'id: 1\ndata: {"a":1}\n\n: keep-alive\n\nid: 2\r\ndata: line1\r\ndata: line2\r\n\r\nevent: error\ndata: {"message":"gone"}\n\n';
const EXPECTED: SseEvent[] = [
  { event: 'message', data: '{"a":1}', id: '1' },
  { event: 'message', data: 'line1\nline2', id: '2' },
  { event: 'error', data: '{"message":"gone"}', id: '2' },
];

describe('SseParser', () => {
  it('parses a whole stream: ids, multi-line data, comments, named events', () => {
    expect(new SseParser().push(STREAM)).toEqual(EXPECTED);
  });

  it('gives the same events for every split point, including between CR and LF', () => {
    for (let i = 0; i <= STREAM.length; i++) {
      for (let j = i; j <= STREAM.length; j += 7) {
        const p = new SseParser();
        const got = [...p.push(STREAM.slice(0, i)), ...p.push(STREAM.slice(i, j)), ...p.push(STREAM.slice(j))];
        expect(got, `split at ${i},${j}`).toEqual(EXPECTED);
      }
    }
  });

  it('one character at a time', () => {
    const p = new SseParser();
    const got: SseEvent[] = [];
    for (const ch of STREAM) got.push(...p.push(ch));
    expect(got).toEqual(EXPECTED);
  });

  it('keeps an unterminated event until its blank line arrives', () => {
    const p = new SseParser();
    expect(p.push('data: x\n')).toEqual([]);
    expect(p.push('\n')).toEqual([{ event: 'message', data: 'x', id: null }]);
  });

  it('a lone CR ends a line', () => {
    expect(new SseParser().push('data:a\r\rdata:b\r\r')).toEqual([
      { event: 'message', data: 'a', id: null },
      { event: 'message', data: 'b', id: null },
    ]);
  });

  it('a comment-only block dispatches nothing', () => {
    expect(new SseParser().push(': keep-alive\n\n: again\n\n')).toEqual([]);
  });
});

describe('readSse', () => {
  it('decodes bytes split inside a multi-byte character', async () => {
    const bytes = new TextEncoder().encode('data: café→✓\n\n');
    const chunks = [bytes.slice(0, 10), bytes.slice(10, 11), bytes.slice(11)];
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        for (const ch of chunks) c.enqueue(ch);
        c.close();
      },
    });
    const got: SseEvent[] = [];
    await readSse(body, (e) => got.push(e));
    expect(got).toEqual([{ event: 'message', data: 'café→✓', id: null }]);
  });
});
