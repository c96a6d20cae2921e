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

// Keyboard answering: the highlighted question takes digit keys (1–9, 0 for the tenth
// answer); J and K move to the next and previous question; an answer moves on by itself.
// Keys typed into a text field stay text.
(function () {
  const form = document.querySelector("form[data-keyboard]");
  if (!form) return;
  let current = null;

  function visibleQuestions() {
    return Array.from(form.querySelectorAll(".question")).filter(function (q) { return !q.hidden; });
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

  function choose(question, index) {
    const select = question.querySelector("select");
    if (select) {
      if (index + 1 >= select.options.length) return;
      select.selectedIndex = index + 1; // option 0 is "Choose…"
      select.dispatchEvent(new Event("change", { bubbles: true }));
      return;
    }
    const options = question.querySelectorAll("input[type=radio]");
    if (index >= options.length) return;
    options[index].checked = true;
    options[index].dispatchEvent(new Event("change", { bubbles: true }));
  }

  form.addEventListener("change", function (event) {
    const question = event.target.closest(".question");
    if (!question || event.target.tagName === "TEXTAREA") return;
    highlight(question);
    // Follow-ups appear on "change" first (the handler above runs before this one).
    window.setTimeout(function () { move(1); }, 0);
  });
  form.addEventListener("click", function (event) {
    const question = event.target.closest(".question");
    if (question) highlight(question);
  });
  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target;
    if (target.matches("textarea, input[type=text], input[type=number], select")) return;
    if (event.key === "j") { move(1); event.preventDefault(); }
    else if (event.key === "k") { move(-1); event.preventDefault(); }
    else if (/^[0-9]$/.test(event.key) && current) {
      choose(current, event.key === "0" ? 9 : Number(event.key) - 1);
      event.preventDefault();
    }
  });
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
