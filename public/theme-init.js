// Applies the saved theme before the first paint (no flash of the wrong theme).
(function () {
  try {
    var t = localStorage.getItem('leasehold-theme') || 'system';
    var dark = t === 'dark' || (t === 'system' && window.matchMedia('(prefers-color-scheme: dark)').matches);
    if (dark) document.documentElement.classList.add('dark');
    document.documentElement.style.colorScheme = dark ? 'dark' : 'light';
  } catch (e) {}
})();
