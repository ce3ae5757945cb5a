/** For the tests of the README's shell blocks: reading their lines as a shell would. */

/** The line without its `# comment` (a `#` outside quotes, at the start or after a space). */
export function stripComment(line: string): string {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote !== null) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) return line.slice(0, i).trimEnd();
  }
  return line.trimEnd();
}

/** Shell words: '...' literal, "..." and bare words with $NAME expanded. */
export function shellWords(text: string, vars: ReadonlyMap<string, string>): string[] {
  const words: string[] = [];
  let word: string | null = null;
  const expand = (s: string) =>
    s.replace(/\$([A-Z_][A-Z0-9_]*)/g, (_, name: string) => {
      const value = vars.get(name);
      if (value === undefined) throw new Error(`the README uses $${name} before setting it`);
      return value;
    });
  for (let i = 0; i < text.length; ) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
      i++;
    } else if (c === "'" || c === '"') {
      const close = text.indexOf(c, i + 1);
      if (close < 0) throw new Error(`unclosed quote in: ${text}`);
      const inner = text.slice(i + 1, close);
      word = (word ?? '') + (c === '"' ? expand(inner) : inner);
      i = close + 1;
    } else {
      const m = /^[^\s'"]+/.exec(text.slice(i))![0];
      word = (word ?? '') + expand(m);
      i += m.length;
    }
  }
  if (word !== null) words.push(word);
  return words;
}

