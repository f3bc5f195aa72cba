// @ts-check
/**
 * A page's `<main>` is served inert and comes alive once the page's own script has finished running
 * (the same module, so this waits for its top-level work): a click or an Enter before its handlers
 * exist would otherwise submit a form natively, reloading the page, or do nothing at all.
 */
const main = document.querySelector('main');
try {
  await import(`/assets/pages/${document.body.dataset.page}.js`);
} finally {
  main?.removeAttribute('inert');
}
