import { randomUUID } from 'node:crypto';
import { BroadcastChannel } from 'node:worker_threads';

/** How one engine finds the other engines of its server (`hangar server --workers N`). */
export interface PeerConfig {
  /** The BroadcastChannel's name, one per server (random), so that tests running several servers in one process never mix. */
  readonly channel: string;
  /** Engines in the server, this one included. */
  readonly count: number;
  /** This engine's place: 0 is the main thread's. */
  readonly index: number;
}

/** How long a question waits for the other threads' answers; one that is stuck answers late, not never. */
const GATHER_MS = 2000;

interface Message {
  readonly topic: string;
  readonly body?: unknown;
  /** Set on questions (`gather`) and their answers. */
  readonly id?: string;
  readonly answer?: boolean;
}

/**
 * The other engines of the same server, each in its own worker thread with its own connections
 * and listeners on the same ports: what one thread must tell the others (a catalog write that wakes
 * blocking queries) or ask them (their metrics). Messages are structured clones over one
 * BroadcastChannel, which does not keep the process alive.
 */
export class Peers {
  private readonly channel: BroadcastChannel;
  private readonly handlers = new Map<string, (body: unknown) => void>();
  private readonly answerers = new Map<string, () => Promise<unknown>>();
  private readonly waiting = new Map<string, (body: unknown) => void>();
  private closed = false;

  constructor(readonly config: PeerConfig) {
    this.channel = new BroadcastChannel(config.channel);
    (this.channel as unknown as { unref(): void }).unref();
    this.channel.onmessage = (event) => this.receive((event as { data: Message }).data);
  }

  /** Tells every other engine (not this one). */
  publish(topic: string, body: unknown): void {
    this.post({ topic, body });
  }

  /** What to do with a topic's messages from the others; one handler per topic. */
  on(topic: string, handler: (body: unknown) => void): void {
    this.handlers.set(topic, handler);
  }

  /** How this engine answers a topic's questions. */
  answer(topic: string, answerer: () => Promise<unknown>): void {
    this.answerers.set(topic, answerer);
  }

  /** Asks every other engine; resolves with the answers that came in time (a failed one is null). */
  gather(topic: string): Promise<unknown[]> {
    const expected = this.config.count - 1;
    if (expected === 0) return Promise.resolve([]);
    const id = randomUUID();
    const answers: unknown[] = [];
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(answers);
      };
      const timer = setTimeout(finish, GATHER_MS);
      this.waiting.set(id, (body) => {
        answers.push(body);
        if (answers.length === expected) finish();
      });
      this.post({ topic, id });
    });
  }

  close(): void {
    this.closed = true;
    this.channel.close();
  }

  private post(message: Message): void {
    // A message of work that finished as the engine closed reaches nobody.
    if (!this.closed) this.channel.postMessage(message);
  }

  private receive(message: Message): void {
    if (message.id === undefined) {
      this.handlers.get(message.topic)?.(message.body);
    } else if (message.answer) {
      this.waiting.get(message.id)?.(message.body);
    } else {
      const answerer = this.answerers.get(message.topic);
      if (!answerer) return;
      answerer().then(
        (body) => this.post({ topic: message.topic, id: message.id, answer: true, body }),
        // A failed answer still counts, so the asker need not wait for its timeout.
        () => this.post({ topic: message.topic, id: message.id, answer: true, body: null }),
      );
    }
  }
}
