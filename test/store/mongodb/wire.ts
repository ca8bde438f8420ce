/**
 * A stand-in MongoDB server at the wire-protocol level, for the store's tests
 * on machines with no MongoDB (this one, CI): the real driver connects to it
 * over a real socket on 127.0.0.1, and the test sees every command the
 * driver sends (with its write concern, read concern and `maxTimeMS`) and
 * chooses each reply, including the server errors that are hard to provoke
 * on a real server (shutdown, step-down, write-concern timeout).
 *
 * It answers the handshake as a standalone MongoDB 7.0 (wire version 21)
 * and knows nothing else: what a command returns is the test's `handle`.
 * It proves how the store talks and reacts, not what a real server does;
 * that is the contract suite's job where a server runs (mongodb.test.ts).
 *
 * Wire format: https://www.mongodb.com/docs/manual/reference/mongodb-wire-protocol/
 * (OP_QUERY for the driver's first `isMaster`, OP_MSG for everything after).
 */
import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { BSON, type Document } from 'mongodb';

const OP_REPLY = 1;
const OP_QUERY = 2004;
const OP_MSG = 2013;

export interface WireCommand {
  /** The command's name: its first field (`insert`, `find`, `findAndModify`, …). */
  name: string;
  /** The command document, with OP_MSG document sequences folded in. */
  body: Document;
}

const HANDSHAKE = new Set(['ismaster', 'isMaster', 'hello']);

export class WireStub {
  /** Every command but the handshake and heartbeats, in arrival order. */
  readonly commands: WireCommand[] = [];
  /** The reply to a command; may be a promise to answer late (or never). */
  handle: (command: WireCommand) => Document | Promise<Document> = () => ({ ok: 1 });
  readonly #server: Server = createServer((socket) => this.#onSocket(socket));
  readonly #sockets = new Set<Socket>();
  #nextRequestId = 1;
  #connections = 0;

  /** Starts listening on 127.0.0.1, port 0; resolves to `host:port`. */
  async listen(): Promise<string> {
    this.#server.listen(0, '127.0.0.1');
    await once(this.#server, 'listening');
    const { port } = this.#server.address() as { port: number };
    return `127.0.0.1:${port}`;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** The commands named `name`, in arrival order. */
  seen(name: string): Document[] {
    return this.commands.filter((c) => c.name === name).map((c) => c.body);
  }

  #onSocket(socket: Socket): void {
    this.#sockets.add(socket);
    const connectionId = ++this.#connections;
    let buffered = Buffer.alloc(0);
    socket.on('close', () => this.#sockets.delete(socket));
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 4 && buffered.length >= buffered.readInt32LE(0)) {
        const length = buffered.readInt32LE(0);
        const message = buffered.subarray(0, length);
        buffered = buffered.subarray(length);
        this.#onMessage(socket, message, connectionId).catch(() => socket.destroy());
      }
    });
  }

  async #onMessage(socket: Socket, message: Buffer, connectionId: number): Promise<void> {
    const requestId = message.readInt32LE(4);
    const opCode = message.readInt32LE(12);
    const body = opCode === OP_QUERY ? readQuery(message) : readMsg(message);
    const name = Object.keys(body)[0] ?? '';
    let reply: Document;
    if (HANDSHAKE.has(name)) {
      reply = helloReply(connectionId);
    } else if (name === 'endSessions') {
      reply = { ok: 1 };
    } else {
      this.commands.push({ name, body });
      reply = await this.handle({ name, body });
    }
    if (socket.destroyed) return;
    socket.write(opCode === OP_QUERY ? this.#reply(requestId, reply) : this.#msg(requestId, reply));
  }

  #msg(responseTo: number, doc: Document): Buffer {
    const bson = BSON.serialize(doc);
    const header = Buffer.alloc(21);
    header.writeInt32LE(21 + bson.length, 0);
    header.writeInt32LE(this.#nextRequestId++, 4);
    header.writeInt32LE(responseTo, 8);
    header.writeInt32LE(OP_MSG, 12);
    header.writeUInt32LE(0, 16); // flagBits
    header.writeUInt8(0, 20); // section kind 0: the body
    return Buffer.concat([header, bson]);
  }

  #reply(responseTo: number, doc: Document): Buffer {
    const bson = BSON.serialize(doc);
    const header = Buffer.alloc(36);
    header.writeInt32LE(36 + bson.length, 0);
    header.writeInt32LE(this.#nextRequestId++, 4);
    header.writeInt32LE(responseTo, 8);
    header.writeInt32LE(OP_REPLY, 12);
    header.writeInt32LE(0, 16); // responseFlags
    header.writeBigInt64LE(0n, 20); // cursorID
    header.writeInt32LE(0, 28); // startingFrom
    header.writeInt32LE(1, 32); // numberReturned
    return Buffer.concat([header, bson]);
  }
}

/** A standalone MongoDB 7.0 that supports sessions (so the driver sends `lsid`). */
function helloReply(connectionId: number): Document {
  return {
    helloOk: true,
    ismaster: true,
    isWritablePrimary: true,
    maxBsonObjectSize: 16 * 1024 * 1024,
    maxMessageSizeBytes: 48_000_000,
    maxWriteBatchSize: 100_000,
    localTime: new Date(),
    logicalSessionTimeoutMinutes: 30,
    connectionId,
    minWireVersion: 0,
    maxWireVersion: 21,
    readOnly: false,
    ok: 1,
  };
}

/** OP_QUERY: flags, collection name (C string), skip, limit, then the query document. */
function readQuery(message: Buffer): Document {
  const nameEnd = message.indexOf(0, 20);
  const docStart = nameEnd + 1 + 8;
  return BSON.deserialize(message.subarray(docStart, docStart + message.readInt32LE(docStart)));
}

/** OP_MSG: flags, then sections: kind 0 (the body) and kind 1 (a named document sequence). */
function readMsg(message: Buffer): Document {
  const flags = message.readUInt32LE(16);
  const end = message.length - (flags & 1 ? 4 : 0); // bit 0: a CRC-32C checksum follows
  let body: Document = {};
  const sequences: Record<string, Document[]> = {};
  for (let at = 20; at < end; ) {
    const kind = message.readUInt8(at++);
    const size = message.readInt32LE(at);
    if (kind === 0) {
      body = BSON.deserialize(message.subarray(at, at + size));
    } else {
      const idEnd = message.indexOf(0, at + 4);
      const id = message.toString('utf8', at + 4, idEnd);
      const docs: Document[] = [];
      for (let d = idEnd + 1; d < at + size; d += message.readInt32LE(d)) {
        docs.push(BSON.deserialize(message.subarray(d, d + message.readInt32LE(d))));
      }
      sequences[id] = docs;
    }
    at += size;
  }
  return { ...body, ...sequences };
}
