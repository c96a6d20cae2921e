// Chat without page reloads. Progressive enhancement: the form works without this script.
// Everything from the server is inserted as text (textContent), never as HTML.
"use strict";

(function () {
  const form = document.getElementById("chat-form");
  const transcript = document.getElementById("transcript");
  if (!form || !transcript) return;
  const message = form.querySelector("textarea[name=message]");
  const turn = form.querySelector("input[name=turn]");
  const send = form.querySelector("button[type=submit]");
  const status = document.getElementById("chat-status");
  const counter = document.getElementById("chat-counter");
  const empty = document.getElementById("transcript-empty");
  const used = document.getElementById("turns-used");

  function bubble(kind, speaker, text) {
    const box = document.createElement("div");
    box.className = "bubble " + kind;
    const who = document.createElement("span");
    who.className = "speaker";
    who.textContent = speaker;
    box.appendChild(who);
    box.appendChild(document.createTextNode(text));
    return box;
  }

  // A message from the server as a sentence, as the pages show them.
  function sentence(text) {
    const trimmed = String(text).trim();
    if (!trimmed) return trimmed;
    const capital = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
    return /[.!?]$/.test(capital) ? capital : capital + ".";
  }

  function say(text, isError) {
    status.textContent = text;
    status.className = isError ? "error" : "muted small";
    status.hidden = !text;
  }

  // The form goes away at the limit (not just hidden: a styled button ignores `hidden`),
  // replaced by the same warning the server renders.
  function reachLimit(limit) {
    const warning = document.createElement("div");
    warning.className = "warning";
    warning.id = "limit-reached";
    warning.textContent = "You have reached the limit of " + limit + " messages. Please end the session.";
    say("", false);
    form.replaceWith(warning);
  }

  // A message that was not stored leaves the transcript as it was.
  function unsend(item) {
    item.remove();
    if (empty && !transcript.children.length) empty.hidden = false;
  }

  function updateCounter() {
    if (counter) counter.textContent = message.value.length + " / " + message.maxLength;
  }

  // The message being typed is kept in this browser until the server has stored it, so a
  // reload (the server was down, the connection dropped) does not lose it. It is kept with
  // the turn it was typed for: when the page shows that turn (or a later one) stored with
  // the same text, the server has it (its answer was lost, or the page was reloaded while
  // it was sent) and the draft is dropped rather than put back in the box.
  const draftKey = "corix-draft:" + form.getAttribute("action");
  function keepDraft() {
    try {
      if (message.value) {
        localStorage.setItem(draftKey, JSON.stringify({ turn: Number(turn.value), text: message.value }));
      } else localStorage.removeItem(draftKey);
    } catch (error) { /* storage disabled: nothing to keep it in */ }
  }
  function readDraft() {
    const kept = localStorage.getItem(draftKey);
    if (kept === null) return null;
    try {
      const draft = JSON.parse(kept);
      if (draft && typeof draft.text === "string") return { turn: Number(draft.turn) || 0, text: draft.text };
    } catch (error) { /* kept as plain text by an earlier version of this page */ }
    return { turn: 0, text: kept };
  }
  function userText(bubble) {
    return Array.from(bubble.childNodes)
      .filter(function (node) { return node.nodeType === Node.TEXT_NODE; })
      .map(function (node) { return node.textContent; })
      .join("");
  }
  function isStored(draft) {
    const text = draft.text.trim();
    return Array.from(transcript.querySelectorAll("li[id^='turn-']")).some(function (item) {
      const bubble = item.querySelector(".bubble.user");
      return Number(item.id.slice(5)) >= draft.turn && bubble !== null && userText(bubble) === text;
    });
  }
  try {
    const draft = readDraft();
    if (draft && isStored(draft)) localStorage.removeItem(draftKey);
    else if (draft && !message.value) message.value = draft.text;
    else if (message.value) keepDraft(); // typed before this script ran
  } catch (error) { /* storage disabled */ }

  message.addEventListener("input", function () {
    updateCounter();
    keepDraft();
  });
  updateCounter();

  // Enter sends, Shift+Enter makes a new line.
  message.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });

  form.addEventListener("submit", async function (event) {
    event.preventDefault();
    if (send.disabled) return;
    const text = message.value.trim();
    if (!text) {
      say("Type a message before sending.", true);
      return;
    }
    say("", false);
    send.disabled = true;
    const item = document.createElement("li");
    item.appendChild(bubble("user", "You", text));
    const pending = bubble("assistant pending", "Assistant", "The assistant is writing…");
    item.appendChild(pending);
    transcript.appendChild(item);
    if (empty) empty.hidden = true;
    item.scrollIntoView({ block: "end", behavior: "smooth" });
    try {
      const response = await fetch(form.action, {
        method: "POST",
        body: new FormData(form),
        headers: { Accept: "application/json" },
        credentials: "same-origin",
      });
      const data = await response.json();
      if (!response.ok) {
        unsend(item);
        if (data.at_limit) {
          reachLimit(Number(used.dataset.max));
          return;
        }
        say(data.error ? sentence(data.error) : "The message could not be sent.", true);
        return;
      }
      item.id = "turn-" + data.index;
      if (data.restarted) {
        const marker = document.createElement("p");
        marker.className = "restart-marker";
        marker.setAttribute("role", "note");
        marker.textContent = transcript.dataset.restartNotice;
        item.insertBefore(marker, item.firstChild);
      }
      const reply = bubble(data.failed ? "assistant failed" : "assistant", "Assistant", data.reply);
      item.replaceChild(reply, pending);
      const sent = data.index + 1;
      turn.value = String(sent);
      message.value = "";
      updateCounter();
      keepDraft();
      const limit = Number(used.dataset.max);
      used.textContent = sent + " of " + limit + " messages used";
      if (sent >= limit) {
        reachLimit(limit);
        return;
      }
      item.scrollIntoView({ block: "end", behavior: "smooth" });
    } catch (error) {
      unsend(item);
      say("The connection was interrupted. Your message may not have been sent; reload the page to check.", true);
    } finally {
      send.disabled = false;
      message.focus();
    }
  });
})();
