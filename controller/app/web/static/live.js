// The live table page (issue 13): swap in the fragments the table pushes over Server-Sent Events,
// and send control lines (buttons, bids, whists) as JSON to /api/control.  No build step, no CDN:
// the table serves this file itself.  Fragments are rendered (and escaped) on the table.
(function () {
  "use strict";
  var body = document.body;
  var parts = (body.dataset.parts || "").split(",").filter(Boolean);
  var live = document.getElementById("live-status");

  function say(el, text) { if (el) { el.textContent = text; } }

  if (parts.length && window.EventSource) {
    var events = body.dataset.events || "/api/events";
    var source = new EventSource(events + "?parts=" + encodeURIComponent(parts.join(",")));
    source.addEventListener("open", function () { say(live, "live"); });
    source.addEventListener("error", function () { say(live, "reconnecting…"); });
    source.addEventListener("parts", function (ev) {
      var msg = JSON.parse(ev.data);
      if (msg.session !== body.dataset.session && body.dataset.session) {
        body.dataset.session = msg.session;
      }
      Object.keys(msg.parts).forEach(function (name) {
        var el = document.querySelector('[data-part="' + name + '"]');
        if (el) {
          // keep which deals of the history are open across updates
          var open = Array.prototype.map.call(el.querySelectorAll("details[open]"), function (d) {
            return d.dataset.deal; });
          el.innerHTML = msg.parts[name];
          open.forEach(function (n) {
            var d = el.querySelector('details[data-deal="' + n + '"]');
            if (d) { d.open = true; }
          });
        }
      });
      body.dataset.seq = msg.seq;
      say(live, "live");
    });
  }

  document.addEventListener("submit", function (ev) {
    var form = ev.target;
    if (!form.dataset || !form.dataset.event) { return; }
    ev.preventDefault();
    var line = { event: form.dataset.event };
    var data = new FormData(form);
    data.forEach(function (value, key) { line[key] = value; });
    if (ev.submitter && ev.submitter.name) { line[ev.submitter.name] = ev.submitter.value; }
    var status = document.getElementById("control-status");
    say(status, "sending…");
    fetch("/api/control", {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json" }, body: JSON.stringify(line)
    }).then(function (r) {
      return r.json().then(function (answer) {
        say(status, r.ok ? "sent: " + JSON.stringify(answer.line) : "refused: " + answer.error);
      });
    }).catch(function () { say(status, "the table did not answer"); });
  });
})();
