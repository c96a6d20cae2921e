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
