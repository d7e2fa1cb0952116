/** HTML escaping for text in element content and quoted attribute values (the manifesto's HTML
 * edition and the explorer's pages): `& < > " '` as entities, nothing else touched. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => ESCAPES[ch]!);
}

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
