/**
 * Every `scheme://user:pass@` in a text with its user-info replaced by `***`, for logs and error
 * messages: the one place Sluice hides credentials a URL carries. It works on text, not on a
 * parsed URL, because the URLs that need it most are the ones a flag refused (an unparsable
 * port, a comma-separated list), and a message may quote the same URL twice. Up to the last `@`
 * before a blank or a quote, so a password holding `@` or `/` is hidden whole; a path with an
 * `@` is hidden too, which costs only a less helpful message.
 */
export function redactCredentials(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^\s'"<>`]*@/gi, '$1***@');
}
