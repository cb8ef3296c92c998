/** Markdown pieces the prompts share: a titled section and a bounded bullet list. */
export const MAX_ITEMS = 30;

export function bullets(items: readonly string[], max = MAX_ITEMS, none = 'none'): string {
  if (items.length === 0) return `(${none})`;
  const shown = items.slice(0, max).map((i) => `- ${i}`);
  return items.length > max ? [...shown, `- … and ${items.length - max} more`].join('\n') : shown.join('\n');
}

export const section = (title: string, body: string): string => `## ${title}\n${body}`;
