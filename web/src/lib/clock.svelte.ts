/**
 * The console's one clock for relative times ("3 min ago"): ticks every 20 s while the tab is visible, so
 * every <Time> on a page moves together and a hidden tab does no work.
 */
export const clock = $state({ now: Date.now() });
setInterval(() => {
  if (!document.hidden) clock.now = Date.now();
}, 20_000);
document.addEventListener('visibilitychange', () => {
  if (!document.hidden) clock.now = Date.now();
});
