// The live table page: swap in the fragments the table pushes over Server-Sent Events, and
// send what a phone enters as the table's remote.  Control lines (buttons, bids, the auction's
// result, whists, the whist mode, claims) go as JSON to /api/control, exactly the lines of
// FORMATS.md / FORMATS-contracts.md; the players' names and closing the pulka go to their own
// routes.  No build step, no CDN: the table serves this file itself.  Fragments are rendered
// (and escaped) on the table.
(function () {
  "use strict";
  var body = document.body;
  var parts = (body.dataset.parts || "").split(",").filter(Boolean);
  var live = document.getElementById("live-status");

  function say(el, text) { if (el) { el.textContent = text; } }

  // What a player is in the middle of choosing survives a new state (a card laid meanwhile):
  // checked chips, typed names, open sections.  A chip the table preselects (whose call it
  // is) wins over an earlier choice once the table moves on to another seat.
  function preselected(form, name) {
    var found = "";
    form.querySelectorAll("input").forEach(function (i) {
      if (i.name === name && i.defaultChecked) { found = i.value; }
    });
    return found;
  }

  function remember(el) {
    var kept = { checked: [], values: {}, open: [] };
    // (not the "pulka is over" tick: a confirmation never outlives a change of the table)
    el.querySelectorAll("input[type=radio]:checked").forEach(function (i) {
      if (i.form && i.form.id) { kept.checked.push([i.form.id, i.name, i.value, preselected(i.form, i.name)]); }
    });
    el.querySelectorAll("input[type=text], input:not([type])").forEach(function (i) {
      if (i.id && document.activeElement === i) { kept.values[i.id] = i.value; }
    });
    el.querySelectorAll("details[open]").forEach(function (d) {
      kept.open.push(d.dataset.deal || (d.querySelector("form") || {}).id || "");
    });
    return kept;
  }

  function restore(el, kept) {
    kept.checked.forEach(function (k) {
      var form = document.getElementById(k[0]);
      if (!form || preselected(form, k[1]) !== k[3]) { return; }
      form.querySelectorAll("input").forEach(function (i) {
        if (i.name === k[1] && i.value === k[2]) { i.checked = true; }
      });
    });
    Object.keys(kept.values).forEach(function (id) {
      var i = document.getElementById(id);
      if (i) { i.value = kept.values[id]; i.focus(); }
    });
    el.querySelectorAll("details").forEach(function (d) {
      var key = d.dataset.deal || (d.querySelector("form") || {}).id || "";
      if (key && kept.open.indexOf(key) >= 0) { d.open = true; }
    });
    el.querySelectorAll("form[data-event=claim]").forEach(claimCheck);
  }

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
          var kept = remember(el);
          el.innerHTML = msg.parts[name];
          restore(el, kept);
        }
      });
      body.dataset.seq = msg.seq;
      say(live, "live");
    });
  }

  // The claim editor offers only valid sums: each seat's choice is at most what the others
  // leave, and the last seat takes the rest (RULES-contracts.md "Claims").
  function claimCheck(form) {
    var left = parseInt(form.dataset.left, 10);
    var chosen = {};
    var taken = 0;
    form.querySelectorAll("fieldset[data-seat]:not([data-rest])").forEach(function (f) {
      var on = f.querySelector("input:checked");
      chosen[f.dataset.seat] = on ? parseInt(on.value, 10) : 0;
      taken += chosen[f.dataset.seat];
    });
    form.querySelectorAll("fieldset[data-seat]:not([data-rest])").forEach(function (f) {
      var room = left - taken + chosen[f.dataset.seat];
      f.querySelectorAll("input").forEach(function (i) { i.disabled = parseInt(i.value, 10) > room; });
    });
    var rest = form.querySelector("output.rest");
    if (rest) { rest.textContent = String(left - taken); }
    return chosen;
  }

  function claimTricks(form) {
    var tricks = claimCheck(form);
    var rest = form.querySelector("fieldset[data-rest]");
    var left = parseInt(form.dataset.left, 10);
    var sum = 0;
    Object.keys(tricks).forEach(function (s) { sum += tricks[s]; });
    if (rest) { tricks[rest.dataset.seat] = left - sum; }
    return tricks;
  }

  document.addEventListener("change", function (ev) {
    var form = ev.target.form;
    if (form && form.dataset.event === "claim") { claimCheck(form); }
  });

  function post(url, payload, done) {
    var status = document.getElementById("control-status");
    say(status, "sending…");
    return fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json" }, body: JSON.stringify(payload)
    }).then(function (r) {
      return r.json().then(function (answer) {
        say(status, r.ok ? (done || "sent: " + JSON.stringify(answer.line || payload)) : "refused: " + answer.error);
        return r.ok;
      });
    }).catch(function () { say(status, "the table did not answer"); return false; });
  }

  // a form done with: cleared and folded, so a second tap does not do it again
  function fold(form) {
    return function (ok) {
      if (!ok) { return; }
      form.reset();
      var details = form.closest("details");
      if (details) { details.open = false; }
    };
  }

  document.addEventListener("submit", function (ev) {
    var form = ev.target;
    if (!form.dataset || !(form.dataset.event || form.dataset.action)) { return; }
    ev.preventDefault();
    var data = new FormData(form);
    if (form.dataset.action === "/api/names") {
      var names = {};
      data.forEach(function (value, key) { names[key] = value; });
      post(form.dataset.action, { names: names }, "the names are saved").then(function (ok) {
        var details = form.closest("details");
        if (ok && details) { details.open = false; }
      });
      return;
    }
    if (form.dataset.action === "/api/pulka/close") {
      post(form.dataset.action, { close: "pulka" }, "the pulka is closed: a new one has begun").then(fold(form));
      return;
    }
    var line = { event: form.dataset.event };
    if (form.dataset.event === "claim") {
      line.tricks = claimTricks(form);
    } else {
      data.forEach(function (value, key) { line[key] = value; });
      if (ev.submitter && ev.submitter.name) { line[ev.submitter.name] = ev.submitter.value; }
    }
    post("/api/control", line);
  });

  document.querySelectorAll("form[data-event=claim]").forEach(claimCheck);
})();
