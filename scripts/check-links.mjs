// Checks every link and image of every Markdown file the package publishes, as npm packs it:
// what an npm user opens in node_modules/durable-chat or on the npm page must not be dead.
//
// - A relative link must name a file (or a folder holding files) of the tarball, and its
//   `#anchor`, when the target is a packed Markdown file, one of that file's headings.
// - A link into this repository (`<repository>/blob/<ref>/<path>` or `/tree/...`) must name a
//   path that exists in the checkout, since the file is not shipped and only the repository
//   can serve it.
// - Any other absolute URL (another site, mailto:) is taken as written.
//
// Usage: node scripts/check-links.mjs [package-dir]   (default: this repository)
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, normalize, posix, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = resolve(process.argv[2] ?? fileURLToPath(new URL('..', import.meta.url)));

/** The files `npm publish` would ship, relative to the package folder. */
function packedFiles() {
  // --ignore-scripts: a prepack build would be slow and changes no Markdown.
  const output = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: packageDir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return JSON.parse(output)[0].files.map((file) => file.path);
}

function repositoryUrl() {
  const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
  const raw = typeof manifest.repository === 'string' ? manifest.repository : manifest.repository?.url;
  return raw?.replace(/^git\+/, '').replace(/\.git$/, '');
}

/** Markdown without fenced blocks and code spans, where link syntax means nothing. */
function proseLines(text) {
  let fence;
  return text.split('\n').map((line) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === undefined && marker !== undefined) fence = marker;
    else if (fence !== undefined && marker?.startsWith(fence)) {
      fence = undefined;
      return '';
    }
    return fence === undefined ? line.replace(/`+[^`]*`+/g, '') : '';
  });
}

const LINK_PATTERNS = [
  /!?\[[^\]]*\]\(\s*<([^>]+)>[^)]*\)/g, // [text](<target with spaces>)
  /!?\[[^\]]*\]\(\s*([^)\s]+)[^)]*\)/g, // [text](target "title"), ![alt](image)
  /^\s{0,3}\[[^\]]+\]:\s*<?([^>\s]+)>?/g, // [label]: target
  /<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*["']([^"']+)["']/g, // <a href>, <img src>
];

function linksOf(text) {
  const links = [];
  proseLines(text).forEach((line, index) => {
    for (const pattern of LINK_PATTERNS) {
      for (const match of line.matchAll(pattern)) links.push({ line: index + 1, target: match[1] });
    }
  });
  return links;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorsOf(text) {
  const anchors = new Set();
  const seen = new Map();
  for (const line of proseLinesKeepingCode(text)) {
    const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const plain = heading.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/<[^>]+>/g, '');
    const base = plain
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Headings keep their code spans (GitHub slugs their text); fenced blocks hold no headings. */
function proseLinesKeepingCode(text) {
  let fence;
  return text.split('\n').filter((line) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === undefined && marker !== undefined) {
      fence = marker;
      return false;
    }
    if (fence !== undefined) {
      if (marker?.startsWith(fence)) fence = undefined;
      return false;
    }
    return true;
  });
}

function check() {
  const files = packedFiles();
  const packed = new Set(files);
  const repository = repositoryUrl();
  const markdown = files.filter((file) => file.endsWith('.md'));
  const texts = new Map(markdown.map((file) => [file, readFileSync(join(packageDir, file), 'utf8')]));
  const problems = [];
  let checked = 0;

  for (const [file, text] of texts) {
    for (const { line, target } of linksOf(text)) {
      checked++;
      const where = `${file}:${line}: ${target}`;
      const [pathPart, anchor] = target.split('#', 2);
      const path = decodeURIComponent(pathPart.split('?')[0]);
      if (repository !== undefined && path.startsWith(`${repository}/`)) {
        const inRepository = /^(?:blob|tree)\/[^/]+\/(.+)$/.exec(path.slice(repository.length + 1))?.[1];
        if (inRepository !== undefined && !existsSync(join(packageDir, normalize(inRepository))))
          problems.push(`${where}: no such path in the repository`);
        continue;
      }
      if (/^[a-z][a-z0-9+.-]*:/i.test(path) || path.startsWith('//')) continue;
      const resolved = path === '' ? file : posix.normalize(posix.join(posix.dirname(file), path));
      if (resolved.startsWith('../') || path.startsWith('/')) {
        problems.push(`${where}: leaves the package (link the repository's absolute URL instead)`);
        continue;
      }
      const folder = resolved.replace(/\/$/, '');
      if (!packed.has(resolved) && !files.some((packedFile) => packedFile.startsWith(`${folder}/`))) {
        problems.push(`${where}: not in the package (${resolved})`);
        continue;
      }
      const targetText = texts.get(resolved);
      if (anchor !== undefined && anchor !== '' && targetText !== undefined) {
        if (!anchorsOf(targetText).has(decodeURIComponent(anchor).toLowerCase()))
          problems.push(`${where}: ${resolved} has no heading #${anchor}`);
      }
    }
  }

  if (problems.length > 0) {
    for (const problem of problems) console.error(problem);
    console.error(
      `check-links: ${problems.length} dead link(s) of ${checked} in ${markdown.length} packed Markdown files`,
    );
    process.exitCode = 1;
  } else {
    console.log(`check-links: ${checked} links in ${markdown.length} packed Markdown files resolve`);
  }
}

check();
