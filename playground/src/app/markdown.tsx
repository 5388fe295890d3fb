import { Fragment, type ReactNode } from 'react';

/**
 * A deliberately tiny markdown renderer: headings, paragraphs, lists, quotes, fenced code,
 * bold, italic and inline code. It builds React elements and never touches innerHTML, so text
 * from the agent is always escaped. Half-streamed markup (an unclosed `**`) stays text
 * until its closing mark arrives.
 */
export function Markdown({ text }: { text: string }) {
  return <div className="markdown">{renderBlocks(text)}</div>;
}

/** `line`: where the block starts in the source, a key that stays put while text streams in. */
type Block = { line: number } & (
  | { kind: 'heading'; level: number; text: string }
  | { kind: 'list'; ordered: boolean; items: { line: number; text: string }[] }
  | { kind: 'code'; text: string }
  | { kind: 'quote'; text: string }
  | { kind: 'paragraph'; text: string }
);

const HEADING = /^(#{1,3})\s+(.*)$/;
const UNORDERED = /^\s*[-*]\s+(.*)$/;
const ORDERED = /^\s*\d+[.)]\s+(.*)$/;
const QUOTE = /^>\s?(.*)$/;
const CONTINUATION = /^\s+\S/;

export function parseBlocks(source: string): Block[] {
  const blocks: Block[] = [];
  const lines = source.split('\n');
  let index = 0;
  while (index < lines.length) {
    const line = lines[index] ?? '';
    const start = index;
    if (line.startsWith('```')) {
      const body: string[] = [];
      index++;
      while (index < lines.length && !(lines[index] ?? '').startsWith('```')) body.push(lines[index++] ?? '');
      index++;
      blocks.push({ line: start, kind: 'code', text: body.join('\n') });
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      blocks.push({ line: start, kind: 'heading', level: heading[1]?.length ?? 1, text: heading[2] ?? '' });
      index++;
      continue;
    }
    if (QUOTE.test(line)) {
      const quoted: string[] = [];
      for (let match = QUOTE.exec(line); match; match = QUOTE.exec(lines[index] ?? '')) {
        quoted.push(match[1] ?? '');
        index++;
      }
      blocks.push({ line: start, kind: 'quote', text: quoted.join('\n') });
      continue;
    }
    const ordered = ORDERED.test(line);
    if (ordered || UNORDERED.test(line)) {
      const pattern = ordered ? ORDERED : UNORDERED;
      const items: { line: number; text: string }[] = [];
      while (index < lines.length) {
        const current = lines[index] ?? '';
        const match = pattern.exec(current);
        const previous = items[items.length - 1];
        if (match) items.push({ line: index, text: match[1] ?? '' });
        // An indented line continues the item above it.
        else if (CONTINUATION.test(current) && previous !== undefined) previous.text += ` ${current.trim()}`;
        else break;
        index++;
      }
      blocks.push({ line: start, kind: 'list', ordered, items });
      continue;
    }
    if (line.trim() === '') {
      index++;
      continue;
    }
    const paragraph: string[] = [];
    while (index < lines.length && isParagraphLine(lines[index] ?? '')) paragraph.push(lines[index++] ?? '');
    blocks.push({ line: start, kind: 'paragraph', text: paragraph.join('\n') });
  }
  return blocks;
}

function isParagraphLine(line: string): boolean {
  return (
    line.trim() !== '' &&
    !line.startsWith('```') &&
    !HEADING.test(line) &&
    !QUOTE.test(line) &&
    !UNORDERED.test(line) &&
    !ORDERED.test(line)
  );
}

function renderBlocks(source: string): ReactNode[] {
  return parseBlocks(source).map((block) => {
    const key = block.line;
    switch (block.kind) {
      case 'heading': {
        const Tag = block.level === 1 ? 'h3' : block.level === 2 ? 'h4' : 'h5';
        return <Tag key={key}>{renderInline(block.text)}</Tag>;
      }
      case 'code':
        return (
          <pre key={key}>
            <code>{block.text}</code>
          </pre>
        );
      case 'quote':
        return <blockquote key={key}>{renderInline(block.text)}</blockquote>;
      case 'list': {
        const items = block.items.map((item) => <li key={item.line}>{renderInline(item.text)}</li>);
        return block.ordered ? <ol key={key}>{items}</ol> : <ul key={key}>{items}</ul>;
      }
      default:
        return <p key={key}>{renderInline(block.text)}</p>;
    }
  });
}

// Order matters: code first, so `**` inside backticks stays literal.
const INLINE = /(`[^`\n]+`)|(\*\*[^*\n]+\*\*)|(\*[^*\n]+\*)/g;

export function renderInline(text: string): ReactNode[] {
  const nodes: ReactNode[] = [];
  let last = 0;
  for (const match of text.matchAll(INLINE)) {
    const start = match.index ?? 0;
    // Keys are character offsets: stable while more text streams in after them.
    if (start > last) nodes.push(<Fragment key={last}>{text.slice(last, start)}</Fragment>);
    const token = match[0];
    if (match[1]) nodes.push(<code key={start}>{token.slice(1, -1)}</code>);
    else if (match[2]) nodes.push(<strong key={start}>{token.slice(2, -2)}</strong>);
    else nodes.push(<em key={start}>{token.slice(1, -1)}</em>);
    last = start + token.length;
  }
  if (last < text.length) nodes.push(<Fragment key={last}>{text.slice(last)}</Fragment>);
  return nodes;
}
