import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { SourceMap, type SourceMapping } from 'node:module';
import { fileURLToPath } from 'node:url';

interface Snapshot {
  snapshot: {
    meta: {
      node_fields: string[];
      node_types: [string[], ...unknown[]];
      edge_fields: string[];
      edge_types: [string[], ...unknown[]];
      location_fields?: string[];
    };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
  locations?: number[];
}

export type HeapGroups = Map<string, { bytes: number; count: number }>;

/** The last two segments of a script's URL: `transport/turn-stream.ts`, `dist/chunk-X.js`. */
function shortScript(url: string): string {
  return url.startsWith('node:') ? url : url.split(/[/\\]/).slice(-2).join('/');
}

/** A bundled script's source map (`dist/chunk-X.js.map`), to name a closure by its source line. */
function sourceMapOf(url: string): SourceMap | undefined {
  const path = url.startsWith('file:') ? fileURLToPath(url) : url;
  if (!existsSync(`${path}.map`)) return undefined;
  return new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8')));
}

/**
 * Self size and count per group of a `.heapsnapshot`: objects by constructor; closures by name
 * and source position (`closure:onAbort @client/out-reader.ts:120`, `locations` of the snapshot),
 * so two arrows of one name in different places are told apart; arrays, hidden and other
 * internal nodes by their first retainer (`(array) <- TurnStream.queue`), which says who holds
 * them. `byRetainer`: every node with its first retainer.
 */
export async function heapGroups(path: string, options: { byRetainer?: boolean } = {}): Promise<HeapGroups> {
  const data = JSON.parse(await readFile(path, 'utf8')) as Snapshot;
  const { meta } = data.snapshot;
  const fields = meta.node_fields;
  const types = meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const edgeCountAt = fields.indexOf('edge_count');
  const edgeWidth = meta.edge_fields.length;
  const edgeTypeAt = meta.edge_fields.indexOf('type');
  const edgeNameAt = meta.edge_fields.indexOf('name_or_index');
  const edgeToAt = meta.edge_fields.indexOf('to_node');
  const edgeTypes = meta.edge_types[0];
  const count = data.nodes.length / width;
  const firstEdge = new Uint32Array(count + 1);
  for (let node = 0, edge = 0; node < count; node++) {
    firstEdge[node] = edge;
    edge += (data.nodes[node * width + edgeCountAt] as number) * edgeWidth;
  }
  firstEdge[count] = data.edges.length;
  const nodeName = (node: number) => data.strings[data.nodes[node * width + nameAt] as number] ?? '?';
  /** The node a named edge of `node` leads to, or -1. */
  const follow = (node: number, name: string): number => {
    for (let edge = firstEdge[node] as number; edge < (firstEdge[node + 1] as number); edge += edgeWidth) {
      const kind = edgeTypes[data.edges[edge + edgeTypeAt] as number];
      if (kind === 'element' || kind === 'hidden') continue;
      if (data.strings[data.edges[edge + edgeNameAt] as number] === name) {
        return (data.edges[edge + edgeToAt] as number) / width;
      }
    }
    return -1;
  };
  // Source position of every closure: `locations` holds (node offset, script id, line, column).
  const position = new Map<number, string>();
  const locationFields = meta.location_fields ?? [];
  const locations = data.locations ?? [];
  const locationWidth = locationFields.length;
  const scripts = new Map<number, { name: string; map: SourceMap | undefined }>();
  for (let at = 0; locationWidth > 0 && at < locations.length; at += locationWidth) {
    const node = (locations[at + locationFields.indexOf('object_index')] as number) / width;
    const scriptId = locations[at + locationFields.indexOf('script_id')] as number;
    const line = locations[at + locationFields.indexOf('line')] as number;
    const column = locations[at + locationFields.indexOf('column')] as number;
    let script = scripts.get(scriptId);
    if (script === undefined || script.name.startsWith('script ')) {
      const shared = follow(node, 'shared');
      // `script_or_debug_info` in Node 20's V8, `script` in others.
      const scriptNode =
        shared < 0 ? -1 : Math.max(follow(shared, 'script_or_debug_info'), follow(shared, 'script'));
      const nameNode = scriptNode < 0 ? -1 : follow(scriptNode, 'name');
      const url = nameNode < 0 ? '' : nodeName(nameNode);
      script = { name: url === '' ? `script ${scriptId}` : shortScript(url), map: sourceMapOf(url) };
      scripts.set(scriptId, script);
    }
    const entry = script.map?.findEntry(line, column) as Partial<SourceMapping> | undefined;
    position.set(
      node,
      entry?.originalSource === undefined || entry.originalLine === undefined
        ? `${script.name}:${line + 1}`
        : `${shortScript(entry.originalSource)}:${entry.originalLine + 1}`,
    );
  }
  /** A plain object's first property names (`Object{chatId,sessionId,…}`): which literal it is. */
  const keysOf = (node: number): string => {
    const names: string[] = [];
    for (let edge = firstEdge[node] as number; edge < (firstEdge[node + 1] as number); edge += edgeWidth) {
      if (edgeTypes[data.edges[edge + edgeTypeAt] as number] !== 'property') continue;
      const name = data.strings[data.edges[edge + edgeNameAt] as number] ?? '?';
      if (name !== '__proto__') names.push(name);
    }
    // Sorted: a dictionary-mode object lists its properties in hash order.
    names.sort();
    return names.length > 5 ? `${names.slice(0, 5).join(',')},…` : names.join(',');
  };
  const label = (node: number) => {
    const type = types[data.nodes[node * width + typeAt] as number] ?? '?';
    const name = nodeName(node);
    if (type === 'closure') {
      const at = position.get(node);
      // No source position: a builtin's closure (a promise's resolve or reject, a bound function).
      return at === undefined
        ? `closure:${name.slice(0, 40) || '(builtin)'}`
        : `closure:${name.slice(0, 40) || '(anonymous)'} @${at}`;
    }
    if (type === 'object' && name === 'Object') return `object:Object{${keysOf(node)}}`;
    return type === 'object' || type === 'native' ? `${type}:${name.slice(0, 50)}` : `(${type})`;
  };
  // First retainer of every node, skipping weak edges.
  const parent = new Int32Array(count).fill(-1);
  const parentEdge: string[] = new Array(count);
  let edge = 0;
  for (let node = 0; node < count; node++) {
    const edges = data.nodes[node * width + edgeCountAt] as number;
    for (let e = 0; e < edges; e++, edge += edgeWidth) {
      const kind = edgeTypes[data.edges[edge + edgeTypeAt] as number];
      if (kind === 'weak') continue;
      const to = (data.edges[edge + edgeToAt] as number) / width;
      if (parent[to] !== -1) continue;
      parent[to] = node;
      const nameOrIndex = data.edges[edge + edgeNameAt] as number;
      // A synthetic root's edges are numbered per snapshot: the number would split one group.
      const synthetic = types[data.nodes[node * width + typeAt] as number] === 'synthetic';
      const edgeName = data.strings[nameOrIndex] ?? '?';
      parentEdge[to] =
        kind === 'element' || kind === 'hidden' || synthetic || /^\d+$/.test(edgeName)
          ? `[${kind}]`
          : edgeName;
    }
  }
  const out: HeapGroups = new Map();
  for (let node = 0; node < count; node++) {
    let key = label(node);
    if (options.byRetainer || key.startsWith('(') || key.startsWith('object:system')) {
      const owner = parent[node] as number;
      if (owner >= 0) key += ` <- ${label(owner)}.${parentEdge[node]}`;
    }
    const entry = out.get(key) ?? { bytes: 0, count: 0 };
    entry.bytes += data.nodes[node * width + sizeAt] as number;
    entry.count++;
    out.set(key, entry);
  }
  return out;
}

/** Growth per session between two snapshots' groups. */
export function growthPerSession(
  before: HeapGroups,
  during: HeapGroups,
  sessions: number,
): Map<string, { bytes: number; count: number }> {
  const out = new Map<string, { bytes: number; count: number }>();
  for (const [key, value] of during) {
    const base = before.get(key) ?? { bytes: 0, count: 0 };
    out.set(key, {
      bytes: (value.bytes - base.bytes) / sessions,
      count: (value.count - base.count) / sessions,
    });
  }
  for (const [key, value] of before) {
    if (!during.has(key)) out.set(key, { bytes: -value.bytes / sessions, count: -value.count / sessions });
  }
  return out;
}

/**
 * Compiled code (what the JIT happened to optimise by then) and buffer memory (socket reads in
 * flight at the snapshot) move by a KiB or more a session between runs of one build: the rest
 * is the steadier figure for comparing builds.
 */
export function isSteady(key: string): boolean {
  return !key.startsWith('(code)') && !key.startsWith('native:');
}
