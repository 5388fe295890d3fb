import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { Markdown, parseBlocks } from '../../playground/src/app/markdown.js';

const render = (text: string) => renderToStaticMarkup(createElement(Markdown, { text }));

describe('the playground markdown renderer', () => {
  it('renders headings, lists, fenced code and inline marks', () => {
    const html = render(
      '# Title\n\nSome **bold**, *soft* and `code`.\n\n- one\n- two\n\n1. first\n2. second\n\n```\nx < 1\n```',
    );
    expect(html).toBe(
      '<div class="markdown"><h3>Title</h3><p>Some <strong>bold</strong>, <em>soft</em> and <code>code</code>.</p>' +
        '<ul><li>one</li><li>two</li></ul><ol><li>first</li><li>second</li></ol>' +
        '<pre><code>x &lt; 1</code></pre></div>',
    );
  });

  it('escapes HTML from the agent instead of rendering it', () => {
    const html = render('<img src=x onerror=alert(1)> **<b>x</b>**\n\n- <script>alert(1)</script>');
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<b>');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).toContain('<strong>&lt;b&gt;x&lt;/b&gt;</strong>');
  });

  it('keeps half-streamed markup as text until it closes', () => {
    expect(render('Some **bol')).toBe('<div class="markdown"><p>Some **bol</p></div>');
    expect(render('Some **bold**')).toBe('<div class="markdown"><p>Some <strong>bold</strong></p></div>');
    // An unclosed fence holds everything after it as code.
    expect(parseBlocks('```\nlet a = 1;\n**not bold**')).toEqual([
      { line: 0, kind: 'code', text: 'let a = 1;\n**not bold**' },
    ]);
  });

  it('continues a list item on an indented line, and renders quotes', () => {
    expect(parseBlocks('1. **Drops** heal with\n   `Last-Event-ID`.\n2. Crashes')).toEqual([
      {
        line: 0,
        kind: 'list',
        ordered: true,
        items: [
          { line: 0, text: '**Drops** heal with `Last-Event-ID`.' },
          { line: 2, text: 'Crashes' },
        ],
      },
    ]);
    expect(render('> you said\n> this')).toBe(
      '<div class="markdown"><blockquote>you said\nthis</blockquote></div>',
    );
  });

  it('keeps `**` inside inline code literal', () => {
    expect(render('use `**kwargs` here')).toBe(
      '<div class="markdown"><p>use <code>**kwargs</code> here</p></div>',
    );
  });

  it('splits blocks on blank lines and keeps line breaks inside a paragraph', () => {
    expect(parseBlocks('a\nb\n\nc')).toEqual([
      { line: 0, kind: 'paragraph', text: 'a\nb' },
      { line: 3, kind: 'paragraph', text: 'c' },
    ]);
    expect(parseBlocks('')).toEqual([]);
  });
});
