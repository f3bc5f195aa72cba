// next/font/google fetches its CSS at build time, and these machines reach no font host. Next's own
// hook for that (NEXT_FONT_GOOGLE_MOCKED_RESPONSES) takes this map, one entry per URL the
// create-next-app template asks for: each family a local @font-face, so the build runs and the
// pages carry the same font classes on both sides.
const css = (family) =>
  `@font-face { font-family: '${family}'; font-style: normal; font-weight: 100 900; font-display: swap; src: local('${family}'); }`;
const url = (family) =>
  `https://fonts.googleapis.com/css2?family=${family.replaceAll(' ', '+')}:wght@100..900&display=swap`;
module.exports = Object.fromEntries(['Geist', 'Geist Mono'].map((f) => [url(f), css(f)]));
