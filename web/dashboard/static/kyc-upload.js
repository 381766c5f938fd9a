// KYC upload of the merchant dashboard: drag and drop a file onto the upload form, and check
// its type and size before sending it. Progressive: without this script the plain file input
// and the form work the same, and the server checks the file again in any case (the API's rule,
// on the bytes). The allowed types and the size limit come from the page (data-accept,
// data-max-size), which has them from the API's own list.
(function () {
  "use strict";
  var form = document.getElementById("document-form");
  if (!form) { return; }
  var input = document.getElementById("document-file");
  var zone = document.getElementById("dropzone");
  var hint = document.getElementById("drop-hint");
  var status = document.getElementById("document-file-status");
  var problem = document.getElementById("document-file-check");
  var maxSize = parseInt(form.getAttribute("data-max-size"), 10);
  var accepted = (form.getAttribute("data-accept") || "").split(",");

  // check says what is wrong with the chosen file, or "" when it may be sent.
  function check(file) {
    if (accepted.indexOf(file.type) < 0) { return form.getAttribute("data-msg-type"); }
    if (file.size > maxSize) { return form.getAttribute("data-msg-size"); }
    return "";
  }

  function show(file) {
    var msg = file ? check(file) : "";
    problem.textContent = msg;
    problem.hidden = msg === "";
    input.setAttribute("aria-invalid", msg === "" ? "false" : "true");
    status.textContent = file ? form.getAttribute("data-msg-chosen") + " " + file.name + " (" + Math.ceil(file.size / 1024) + " " + form.getAttribute("data-msg-kb") + ")" : "";
    return msg === "";
  }

  hint.hidden = false;
  zone.classList.add("droppable");
  input.addEventListener("change", function () { show(input.files[0]); });
  ["dragenter", "dragover"].forEach(function (name) {
    zone.addEventListener(name, function (ev) {
      ev.preventDefault();
      zone.classList.add("dragging");
    });
  });
  ["dragleave", "drop"].forEach(function (name) {
    zone.addEventListener(name, function () { zone.classList.remove("dragging"); });
  });
  zone.addEventListener("drop", function (ev) {
    ev.preventDefault();
    var files = ev.dataTransfer && ev.dataTransfer.files;
    if (!files || files.length === 0) { return; }
    input.files = files; // the form sends the dropped file as if it had been chosen
    show(files[0]);
    input.focus();
  });
  form.addEventListener("submit", function (ev) {
    var file = input.files[0];
    if (file && !show(file)) {
      ev.preventDefault();
      input.focus();
    }
  });
}());
