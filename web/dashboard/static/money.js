// The money pages' small behaviours, loaded by the pages that need them (no inline script: the
// Content-Security-Policy allows scripts from this origin only). Everything here improves a
// page that already works without it: the chart has its table, a URL can be selected by hand.
(function () {
	"use strict";

	// Volume chart of the home page: the data is the JSON of #volume's data-volume attribute,
	// written by the server (money_home.go); uPlot (vendored) draws one bar chart per currency,
	// collected and paid out side by side for each day. The legend shows the amounts as the
	// page writes them (sika.FormatMoney, given per point).
	function drawVolume(section) {
		if (typeof uPlot === "undefined") return;
		var data;
		try { data = JSON.parse(section.getAttribute("data-volume")); } catch (e) { return; }
		var compact = new Intl.NumberFormat(data.lang, { notation: "compact", maximumFractionDigits: 1 });
		var dayFormat = new Intl.DateTimeFormat(data.lang, { day: "numeric", month: "short", timeZone: "UTC" });
		var charts = [];
		section.querySelectorAll(".chart-canvas[data-series]").forEach(function (el) {
			var s = data.series[Number(el.getAttribute("data-series"))];
			if (!s) return;
			var legend = function (texts) {
				return function (u, v, sidx, idx) { return idx == null ? "—" : texts[idx]; };
			};
			var opts = {
				width: Math.max(el.clientWidth, 260),
				height: 220,
				tzDate: function (ts) { return uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC"); },
				scales: { x: { range: function (u, min, max) { return [min - 43200, max + 43200]; } } },
				axes: [
					{ values: function (u, splits) { return splits.map(function (t) { return dayFormat.format(new Date(t * 1e3)); }); } },
					{ size: 56, values: function (u, splits) { return splits.map(function (v) { return compact.format(v); }); } },
				],
				series: [
					{ label: data.label_day, value: function (u, t) { return t == null ? "—" : dayFormat.format(new Date(t * 1e3)); } },
					{ label: data.label_collected, fill: "#1e8e3e", stroke: "#155d2a", width: 1,
						paths: uPlot.paths.bars({ size: [0.4, 40], align: -1 }), points: { show: false },
						value: legend(s.collected_text) },
					{ label: data.label_paid_out, fill: "#0a58ca", stroke: "#08429a", width: 1,
						paths: uPlot.paths.bars({ size: [0.4, 40], align: 1 }), points: { show: false },
						value: legend(s.paid_out_text) },
				],
			};
			el.textContent = "";
			var chart = new uPlot(opts, [s.days, s.collected.map(Number), s.paid_out.map(Number)], el);
			el.setAttribute("data-drawn", "true");
			charts.push({ chart: chart, el: el });
		});
		var pending = 0;
		window.addEventListener("resize", function () {
			clearTimeout(pending);
			pending = setTimeout(function () {
				charts.forEach(function (c) { c.chart.setSize({ width: Math.max(c.el.clientWidth, 260), height: 220 }); });
			}, 150);
		});
	}

	// Copy buttons: a button[data-copy] copies the value of the input it names (a payment
	// link's or a checkout session's URL) and says so in its status element (aria-live). The
	// buttons are hidden until this script shows them; without it the URL is in a read-only
	// field the person can select.
	function copy(button) {
		var input = document.getElementById(button.getAttribute("data-copy"));
		var status = document.getElementById(button.getAttribute("data-copy-status"));
		if (!input) return;
		var done = function (ok) {
			if (status) status.textContent = button.getAttribute(ok ? "data-copied" : "data-copy-failed");
		};
		if (navigator.clipboard && window.isSecureContext) {
			navigator.clipboard.writeText(input.value).then(function () { done(true); }, function () { done(false); });
			return;
		}
		input.focus();
		input.select();
		var ok = false;
		try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
		done(ok);
	}

	function showCopyButtons(root) {
		root.querySelectorAll("button[data-copy][hidden]").forEach(function (b) { b.hidden = false; });
	}

	document.addEventListener("click", function (ev) {
		var button = ev.target.closest && ev.target.closest("button[data-copy]");
		if (button) {
			ev.preventDefault();
			copy(button);
		}
	});

	function start() {
		var volume = document.getElementById("volume");
		if (volume) drawVolume(volume);
		showCopyButtons(document);
	}
	if (document.readyState === "loading") {
		document.addEventListener("DOMContentLoaded", start);
	} else {
		start();
	}
	// Parts of a page swapped in by htmx get their buttons too.
	document.addEventListener("htmx:afterSettle", function (ev) { showCopyButtons(ev.target); });
})();
