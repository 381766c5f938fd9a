// Hosted payment page: validates the form, starts the payment through the page's public
// endpoint, then follows it (phone approval, post-push OTP, redirect) until it succeeds or
// fails. No framework, no third-party code.
(function () {
  "use strict";
  var page = document.getElementById("page");
  var form = document.getElementById("pay-form");
  if (!page || !form) return;
  var msg = JSON.parse(document.getElementById("messages").textContent || "{}");
  var kind = page.dataset.kind;
  var payURL = page.dataset.payUrl, otpURL = page.dataset.otpUrl, pollURL = page.dataset.pollUrl;
  var $ = function (id) { return document.getElementById(id); };
  var current = null; // the payment in progress
  var pollTimer = null;

  function show(id) {
    ["form-screen", "waiting-screen", "otp-screen", "success-screen", "failure-screen", "closed"].forEach(function (s) {
      var el = $(s);
      if (el) el.hidden = s !== id;
    });
    var focus = $(id) && $(id).querySelector("h2, input, button");
    if (focus && focus.tagName === "H2") { focus.setAttribute("tabindex", "-1"); }
    if (focus) focus.focus();
  }

  function selectedNetwork() {
    return form.querySelector("input[name=network]:checked");
  }

  function filterNetworks() {
    var country = $("country").value, any = false, checked = selectedNetwork();
    form.querySelectorAll(".network").forEach(function (label) {
      var visible = label.dataset.country === country;
      label.hidden = !visible;
      if (visible) any = true;
      if (!visible && checked && label.contains(checked)) checked.checked = false;
    });
    $("no-network").hidden = any;
    updateOTP();
  }

  function updateOTP() {
    var n = selectedNetwork();
    var needs = !!(n && n.dataset.otp);
    $("otp-field").hidden = !needs;
    $("otp-instructions").textContent = needs ? msg.otp_help + " " + n.dataset.otpInstructions : "";
  }

  // codeMessages are the business errors the page words for the customer, in the page's language.
  var codeMessages = { checkout_payment_in_progress: msg.error_in_progress, usage_limit_reached: msg.closed_USED_UP,
    link_inactive: msg.closed_INACTIVE };

  // say writes a message in el; words that are not the page's language (the API's own, in
  // English) are marked with theirs, as the dashboard marks them.
  function say(el, text, lang) {
    el.textContent = text;
    if (lang && lang !== document.documentElement.lang) el.setAttribute("lang", lang);
    else el.removeAttribute("lang");
  }

  // sayError writes the API's refusal in el: the page's words for the codes it knows, else the
  // API's own message (English).
  function sayError(el, body) {
    if (!body || !body.error) return say(el, msg.error_generic);
    var code = body.error.code;
    if (typeof code === "string" && Object.prototype.hasOwnProperty.call(codeMessages, code)) return say(el, codeMessages[code]);
    if (body.error.message) return say(el, body.error.message, "en");
    var out = [];
    Object.keys(body.error).forEach(function (k) { out.push(body.error[k].join(" ")); });
    if (!out.length) return say(el, msg.error_generic);
    say(el, out.join(" "), "en");
  }

  function post(url, data) {
    return fetch(url, {
      method: "POST", headers: { "Content-Type": "application/json", "Accept": "application/json" },
      body: JSON.stringify(data), credentials: "omit"
    }).then(function (r) {
      return r.json().then(function (body) { return { status: r.status, body: body }; });
    });
  }

  function setBusy(button, busy, label) {
    button.disabled = busy;
    if (busy) { button.dataset.label = button.textContent; button.textContent = msg.paying; }
    else if (button.dataset.label) { button.textContent = button.dataset.label; }
  }

  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    var err = $("form-error");
    say(err, "");
    var data = { country: $("country").value, customer_phone: $("customer_phone").value.trim() };
    var n = selectedNetwork();
    // a number the merchant gave is not shown (only its mask): left empty, the payment uses it
    var missing = !n || (!data.customer_phone && !$("customer_phone").dataset.known);
    if (n) data.network = n.value;
    if (n && n.dataset.otp) { data.otp = $("otp").value.trim(); missing = missing || !data.otp; }
    if ($("amount")) {
      // as people here write it: "1 000" (spaces, no-break spaces between thousands), "12,50"
      data.amount = $("amount").value.replace(/[\s\u00a0\u202f]/g, "").replace(",", ".");
      missing = missing || !data.amount;
      var min = parseFloat(page.dataset.minAmount);
      if (data.amount && !isNaN(min) && parseFloat(data.amount) < min) {
        say(err, msg.error_min_amount + " " + (page.dataset.minAmountText || page.dataset.minAmount) + ".");
        $("amount").setAttribute("aria-invalid", "true");
        $("amount").focus();
        return;
      }
    }
    if (page.dataset.kind === "link") {
      // the price the page shows: a link whose price changed since refuses it, naming the new one
      data.currency = page.dataset.currency;
      if (!$("amount") && page.dataset.amount) data.amount = page.dataset.amount;
    }
    if ($("customer_name")) {
      data.customer_name = $("customer_name").value.trim();
      data.customer_email = $("customer_email").value.trim();
      missing = missing || !data.customer_name;
    }
    if (missing) { say(err, msg.field_required); return; }
    var button = $("pay-button");
    setBusy(button, true);
    post(payURL, data).then(function (res) {
      setBusy(button, false);
      if (res.status === 409 && res.body && res.body.error && res.body.error.code === "session_not_payable") { closeSession(); return; }
      if (res.status !== 201) { sayError(err, res.body); return; }
      follow(res.body.data);
    }).catch(function () { setBusy(button, false); say(err, msg.error_network); });
  });

  function follow(payment) {
    current = payment;
    var next = payment.next_action || {};
    if (payment.status !== "PENDING") { finish(payment); return; }
    if (next.type === "otp_confirmation") { say($("otp-error"), ""); $("push-otp").value = ""; show("otp-screen"); }
    else {
      $("redirect").hidden = next.type !== "redirect" || !next.url;
      if (next.url) $("redirect-link").href = next.url;
      show("waiting-screen");
    }
    poll();
  }

  $("otp-form").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var code = $("push-otp").value.trim();
    if (!code) { say($("otp-error"), msg.field_required); return; }
    var button = $("otp-button");
    setBusy(button, true);
    post(otpURL, { transaction: current.id, otp: code }).then(function (res) {
      setBusy(button, false);
      if (res.status !== 200) { sayError($("otp-error"), res.body); return; }
      if (res.body.data.status !== "PENDING") finish(res.body.data);
      else show("waiting-screen");
    }).catch(function () { setBusy(button, false); say($("otp-error"), msg.error_network); });
  });

  // closeSession shows why a session's page no longer takes a payment (the merchant cancelled
  // it, it expired or was paid while the page was open), in the page's language.
  function closeSession() {
    var close = function (status) {
      $("closed-message").textContent = msg["closed_" + status] || msg.closed_EXPIRED;
      show("closed");
    };
    fetch(pollURL, { headers: { "Accept": "application/json" }, credentials: "omit" })
      .then(function (r) { return r.json(); })
      .then(function (body) { close(body && body.data && body.data.status); }) // PENDING: past expires_at
      .catch(function () { close("EXPIRED"); });
  }

  function poll() {
    clearTimeout(pollTimer);
    pollTimer = setTimeout(function () {
      var url = kind === "link" ? pollURL + current.id + "/" : pollURL;
      fetch(url, { headers: { "Accept": "application/json" }, credentials: "omit" })
        .then(function (r) { return r.json(); })
        .then(function (body) {
          var data = body && body.data;
          var payment = kind === "link" ? data : data && data.transaction;
          if (payment && payment.id === current.id && payment.status !== "PENDING") { finish(payment); return; }
          poll();
        })
        .catch(function () { poll(); });
    }, 1000);
  }

  function finish(payment) {
    clearTimeout(pollTimer);
    if (payment.status === "SUCCESS") {
      $("success-reference").textContent = payment.reference;
      show("success-screen");
    } else {
      var known = msg["failure_" + payment.failure_code];
      say($("failure-message"), known || payment.failure_message || "", known ? "" : "en");
      show("failure-screen");
    }
  }

  $("retry-button").addEventListener("click", function () {
    current = null;
    if ($("otp")) $("otp").value = "";
    show("form-screen");
  });

  // The network is preselected from the number typed, as the service predicts it from the
  // numbering plans, until the customer picks one; the country follows the number's calling code.
  var picked = false, predictTimer = null, predictSeq = 0;

  function showHint(radio) {
    var hint = $("network-hint");
    if (!radio) { hint.hidden = true; hint.textContent = ""; return; }
    var name = radio.parentNode.querySelector("span").textContent;
    hint.textContent = msg.network_detected + " " + name + " (" + msg.network_detected_check + ")";
    hint.hidden = false;
  }

  function predict() {
    var phone = $("customer_phone").value.trim();
    var seq = ++predictSeq;
    if (picked || !page.dataset.predictUrl || phone.replace(/\D/g, "").length < 8) return;
    var url = page.dataset.predictUrl + "?phone=" + encodeURIComponent(phone) + "&country=" + encodeURIComponent($("country").value);
    fetch(url, { headers: { "Accept": "application/json" }, credentials: "omit" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (body) {
        var p = body && body.data;
        if (picked || seq !== predictSeq || !p || !p.network) return;
        var country = $("country");
        if (p.country !== country.value && country.querySelector("option[value='" + p.country + "']")) {
          country.value = p.country;
          filterNetworks();
        }
        var radio = form.querySelector("input[name=network][value='" + p.network + "']");
        if (!radio || radio.parentNode.hidden) return;
        radio.checked = true;
        updateOTP();
        showHint(radio);
      })
      .catch(function () {});
  }

  $("customer_phone").addEventListener("input", function () {
    clearTimeout(predictTimer);
    predictTimer = setTimeout(predict, 300);
  });
  $("country").addEventListener("change", filterNetworks);
  form.addEventListener("change", function (ev) {
    if (ev.target.name !== "network") return;
    // a choice of the customer's own is never overridden
    if (ev.isTrusted) { picked = true; showHint(null); }
    updateOTP();
  });
  filterNetworks();
})();
