// Follow-up questions appear only when the answers they depend on say so.
// Hidden follow-ups have their inputs disabled, so they are not submitted.
// Without this script every follow-up shows and the server ignores those that do not apply.
"use strict";

(function () {
  const forms = document.querySelectorAll("form[data-follow-ups]");

  function conditionsOf(question) {
    // data-show-if="question=value|question=value" (any of them)
    return question.dataset.showIf.split("|").map(function (part) {
      const at = part.indexOf("=");
      return { question: part.slice(0, at), equals: part.slice(at + 1) };
    });
  }

  function answer(form, fieldName) {
    const checked = form.querySelector('input[name="' + CSS.escape(fieldName) + '"]:checked:not(:disabled)');
    if (checked) return checked.value;
    const other = form.querySelector('[name="' + CSS.escape(fieldName) + '"]:not([type=radio]):not(:disabled)');
    return other ? other.value : "";
  }

  function refresh(form) {
    form.querySelectorAll(".question[data-show-if]").forEach(function (question) {
      const prefix = question.dataset.prefix;
      const turn = question.dataset.turn;
      const shown = conditionsOf(question).some(function (condition) {
        const name = prefix + ":" + condition.question + (turn ? ":" + turn : "");
        const sameTurn = answer(form, name);
        const dialogue = answer(form, prefix + ":" + condition.question);
        return sameTurn === condition.equals || dialogue === condition.equals;
      });
      question.hidden = !shown;
      question.querySelectorAll("input, select, textarea").forEach(function (input) {
        input.disabled = !shown;
      });
    });
  }

  forms.forEach(function (form) {
    form.addEventListener("change", function () { refresh(form); });
    refresh(form);
  });
})();

// Keyboard answering: the highlighted question takes digit keys for its answers (shown
// beside each answer): 1–9, 0 for the tenth, and two digits typed quickly for the 11th
// answer on (1 then 1). J and K move to the next and previous question; an answer moves
// on by itself; Ctrl+Enter (or ⌘+Enter) submits. Keys typed into a text field stay text.
(function () {
  const form = document.querySelector("form[data-keyboard]");
  if (!form) return;
  const SECOND_DIGIT_MS = 700;
  let current = null;
  let pending = null; // { question, digit, timer } while a second digit may follow

  function visibleQuestions() {
    return Array.from(form.querySelectorAll(".question")).filter(function (q) { return !q.hidden; });
  }

  function answerCount(question) {
    const select = question.querySelector("select");
    if (select) return select.options.length - 1; // option 0 is "Choose…"
    return question.querySelectorAll("input[type=radio]").length;
  }

  function showKeys(question) {
    const select = question.querySelector("select");
    if (select) {
      Array.from(select.options).slice(1).forEach(function (option, index) {
        option.textContent = (index + 1) + " · " + option.textContent;
      });
      return;
    }
    if (question.querySelector(".scale")) return; // a scale's points are their own keys
    question.querySelectorAll("input[type=radio]").forEach(function (input, index) {
      const key = document.createElement("kbd");
      key.className = "answer-key";
      key.textContent = String(index + 1);
      key.setAttribute("aria-hidden", "true");
      input.closest("label").appendChild(key);
    });
  }

  function highlight(question) {
    if (current) current.classList.remove("current");
    current = question;
    if (!current) return;
    current.classList.add("current");
    current.scrollIntoView({ block: "nearest", behavior: "smooth" });
  }

  function move(step) {
    const questions = visibleQuestions();
    if (!questions.length) return;
    const at = questions.indexOf(current);
    const next = at < 0 ? 0 : Math.min(Math.max(at + step, 0), questions.length - 1);
    highlight(questions[next]);
  }

  function choose(question, number) {
    if (number < 1 || number > answerCount(question)) return;
    const select = question.querySelector("select");
    if (select) {
      select.selectedIndex = number; // option 0 is "Choose…"
      select.dispatchEvent(new Event("change", { bubbles: true }));
      return;
    }
    const option = question.querySelectorAll("input[type=radio]")[number - 1];
    option.checked = true;
    option.dispatchEvent(new Event("change", { bubbles: true }));
  }

  function settlePending() {
    if (!pending) return;
    window.clearTimeout(pending.timer);
    const done = pending;
    pending = null;
    choose(done.question, done.digit);
  }

  function digit(question, value) {
    if (pending && pending.question === question) {
      const number = pending.digit * 10 + value;
      window.clearTimeout(pending.timer);
      pending = null;
      choose(question, number);
      return;
    }
    settlePending();
    const count = answerCount(question);
    if (value === 0) { choose(question, 10); return; }
    if (value * 10 <= count) { // a second digit could follow: wait for it
      pending = { question: question, digit: value, timer: window.setTimeout(settlePending, SECOND_DIGIT_MS) };
      return;
    }
    choose(question, value);
  }

  form.addEventListener("change", function (event) {
    const question = event.target.closest(".question");
    if (!question || event.target.tagName === "TEXTAREA") return;
    highlight(question);
    // Follow-ups appear on "change" first (the handler above runs before this one), so the
    // next question is known now: moving at once keeps up with fast typing.
    move(1);
  });
  form.addEventListener("click", function (event) {
    const question = event.target.closest(".question");
    if (question) highlight(question);
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      settlePending();
      form.requestSubmit();
      event.preventDefault();
      return;
    }
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target;
    if (target.matches("textarea, input[type=text], input[type=number], select")) return;
    if (event.key === "j") { settlePending(); move(1); event.preventDefault(); }
    else if (event.key === "k") { settlePending(); move(-1); event.preventDefault(); }
    else if (/^[0-9]$/.test(event.key) && current) {
      digit(current, Number(event.key));
      event.preventDefault();
    }
  });
  form.querySelectorAll(".question").forEach(showKeys);
  highlight(visibleQuestions()[0] || null);
})();

// Time on item: seconds the page was in view, sent with the pass.
(function () {
  const field = document.querySelector("input[name=seconds_in_view]");
  if (!field) return;
  let seconds = 0;
  let since = document.hidden ? null : performance.now();
  function pause() {
    if (since !== null) seconds += (performance.now() - since) / 1000;
    since = null;
  }
  document.addEventListener("visibilitychange", function () {
    if (document.hidden) pause();
    else since = performance.now();
  });
  field.form.addEventListener("submit", function () {
    pause();
    field.value = seconds.toFixed(1);
    if (!document.hidden) since = performance.now();
  });
})();
