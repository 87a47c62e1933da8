// The collect page works as plain forms; this script makes an item's file
// input take several files, uploads each as soon as it is chosen or dropped
// with a progress bar, then fetches the page again and puts the item's new
// state and the count in place. Every text comes from the page's table.
(function () {
  "use strict";
  if (!window.XMLHttpRequest || !window.FormData || !window.DOMParser) {
    return;
  }
  var strings = JSON.parse(document.getElementById("collect-strings").textContent);
  document.documentElement.className += " js";

  function format(text) {
    var args = Array.prototype.slice.call(arguments, 1);
    return text.replace(/%[sd]/g, function () { return String(args.shift()); });
  }

  function enhance(root) {
    var inputs = root.querySelectorAll("input.file");
    for (var i = 0; i < inputs.length; i++) {
      inputs[i].multiple = true;
      inputs[i].required = false;
    }
  }

  // The page as the server renders it now: the item and the count are
  // replaced. Uploads still running (on this item too) and failed ones keep
  // their rows; finished ones are in the item's list of files.
  function refresh(itemId) {
    var xhr = new XMLHttpRequest();
    xhr.open("GET", window.location.pathname);
    xhr.responseType = "document";
    xhr.onload = function () {
      var doc = xhr.response;
      if (xhr.status !== 200 || !doc || !doc.getElementById("item-" + itemId)) {
        window.location.reload();
        return;
      }
      var fresh = doc.getElementById("item-" + itemId);
      var old = document.getElementById("item-" + itemId);
      var hadFocus = old.contains(document.activeElement);
      fresh = document.importNode(fresh, true);
      enhance(fresh);
      var list = fresh.querySelector(".progress");
      var keep = old.querySelectorAll(".progress li:not(.done)");
      for (var i = 0; i < keep.length; i++) {
        list.appendChild(keep[i]);
      }
      old.parentNode.replaceChild(fresh, old);
      var summary = doc.getElementById("summary");
      if (summary) {
        document.getElementById("summary").innerHTML = summary.innerHTML;
      }
      if (hadFocus) {
        fresh.querySelector("input.file").focus();
      }
      watch();
    };
    xhr.onerror = function () { window.location.reload(); };
    xhr.send();
  }

  // Each file is read in the background, seconds after its upload. While
  // an item's files are being read (data-reading), the page asks for them
  // again, less and less often, and puts the new lists in place: what each
  // file looks like, and a note when it is not what the item asks for. A
  // list the uploader is using waits for the next turn; after about ten
  // minutes the page stops asking (a reload shows what came since).
  var pollDelays = [2000, 3000, 5000, 8000, 13000];
  var polls = 0;
  var pollTimer = null;

  function watch() {
    polls = 0;
    if (pollTimer === null) {
      schedule();
    }
  }

  function schedule() {
    if (!document.querySelector(".item-files[data-reading]") || polls >= 50) {
      pollTimer = null;
      return;
    }
    pollTimer = window.setTimeout(poll, pollDelays[Math.min(polls, pollDelays.length - 1)]);
    polls++;
  }

  function poll() {
    var xhr = new XMLHttpRequest();
    xhr.open("GET", window.location.pathname);
    xhr.responseType = "document";
    xhr.onload = function () {
      var doc = xhr.response;
      if (xhr.status !== 200 || !doc) {
        pollTimer = null;
        return;
      }
      var reading = document.querySelectorAll(".item-files[data-reading]");
      for (var i = 0; i < reading.length; i++) {
        var old = reading[i];
        var fresh = doc.getElementById(old.id);
        if (fresh && !old.contains(document.activeElement)) {
          old.parentNode.replaceChild(document.importNode(fresh, true), old);
        }
      }
      schedule();
    };
    xhr.onerror = function () { schedule(); };
    xhr.send();
  }

  function row(name) {
    var li = document.createElement("li");
    var label = document.createElement("span");
    label.className = "up-name";
    label.textContent = name;
    var state = document.createElement("span");
    state.className = "up-state";
    state.textContent = strings.uploading;
    var bar = document.createElement("progress");
    bar.max = 100;
    bar.value = 0;
    li.appendChild(label);
    li.appendChild(state);
    li.appendChild(bar);
    return li;
  }

  function failure(status, body) {
    switch (status) {
      case 404:
      case 410:
        return strings.gone;
      case 409:
        return body.indexOf('"upload_budget_spent"') >= 0 ? strings.budget : strings.conflict;
      case 413:
        return strings.too_large;
      case 429:
        return strings.busy;
    }
    return strings.failed;
  }

  // Files go up one after another, so that each bar moves in turn and a
  // phone's connection is not split between them.
  function upload(form, files) {
    var item = form.closest(".item");
    var itemId = item.id.slice("item-".length);
    var title = item.querySelector("h3").textContent;
    var max = Number(form.getAttribute("data-max"));
    var list = form.querySelector(".progress");
    var queue = [];
    for (var i = 0; i < files.length; i++) {
      var li = row(files[i].name);
      list.appendChild(li);
      queue.push({ file: files[i], li: li });
    }
    var received = 0;
    function finish(li, ok, text) {
      li.className = ok ? "done" : "failed";
      li.querySelector(".up-state").textContent = text;
      if (ok) {
        li.querySelector("progress").value = 100;
        received++;
      }
      next();
    }
    function next() {
      var job = queue.shift();
      if (!job) {
        if (received > 0) {
          document.getElementById("live").textContent = format(strings.received, title);
          refresh(itemId);
        }
        return;
      }
      if (max > 0 && job.file.size > max) {
        finish(job.li, false, strings.too_large);
        return;
      }
      var bar = job.li.querySelector("progress");
      var xhr = new XMLHttpRequest();
      xhr.open("POST", form.getAttribute("data-upload"));
      xhr.upload.onprogress = function (e) {
        if (e.lengthComputable) {
          bar.value = Math.floor(e.loaded / e.total * 99);
        }
      };
      xhr.onload = function () {
        if (xhr.status === 201) {
          finish(job.li, true, strings.uploaded);
        } else {
          finish(job.li, false, failure(xhr.status, xhr.responseText || ""));
        }
      };
      xhr.onerror = function () { finish(job.li, false, strings.failed); };
      var body = new FormData();
      body.append("file", job.file, job.file.name);
      xhr.send(body);
    }
    next();
  }

  enhance(document);
  watch();

  document.addEventListener("change", function (e) {
    var input = e.target;
    if (input.classList && input.classList.contains("file") && input.files.length > 0) {
      var files = Array.prototype.slice.call(input.files);
      input.value = "";
      upload(input.form, files);
    }
  });

  // A file dropped on an item goes to that item; one dropped elsewhere is
  // not opened by the browser in place of the page.
  var dragged = null;
  function over(e) {
    var item = e.target.closest ? e.target.closest(".item") : null;
    if (dragged && dragged !== item) {
      dragged.classList.remove("dragging");
    }
    dragged = item;
    if (item) {
      item.classList.add("dragging");
    }
    e.preventDefault();
    e.dataTransfer.dropEffect = item ? "copy" : "none";
  }
  document.addEventListener("dragenter", over);
  document.addEventListener("dragover", over);
  document.addEventListener("dragleave", function (e) {
    if (dragged && !e.relatedTarget) {
      dragged.classList.remove("dragging");
      dragged = null;
    }
  });
  document.addEventListener("drop", function (e) {
    e.preventDefault();
    var item = e.target.closest ? e.target.closest(".item") : null;
    if (dragged) {
      dragged.classList.remove("dragging");
      dragged = null;
    }
    if (item && e.dataTransfer.files.length > 0) {
      upload(item.querySelector("form.upload"), e.dataTransfer.files);
    }
  });
})();
