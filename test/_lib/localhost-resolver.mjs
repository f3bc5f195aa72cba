// Preloaded (`node --import`) into scripts a test runs: names under `.localhost` resolve to
// loopback, as browsers, macOS and systemd-resolved already do (RFC 6761) and this container's
// resolver does not. Every other name resolves as usual.
import dns from 'node:dns';

const lookup = dns.lookup;
dns.lookup = function (host, options, callback) {
  if (typeof options === 'function') {
    callback = options;
    options = {};
  }
  if (typeof host === 'string' && (host === 'localhost' || host.endsWith('.localhost'))) {
    const all = typeof options === 'object' && options !== null && options.all;
    process.nextTick(() =>
      all ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4),
    );
    return {};
  }
  return lookup.call(this, host, options, callback);
};
