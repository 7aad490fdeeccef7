// The learning studio's script (plugins/learning/views/studio-*.tsx). The pages work without it. With it:
// - a slug field (`data-slug-from="<id of the title or name field>"`) follows its title while the author has not
//   typed a slug of their own; the server still checks the slug;
// - the quiz editor gets "Add question", "Add option" and "Remove" buttons (`data-studio-js`, hidden until now):
//   new questions and options are clones of the page's <template>s, and every field is renumbered after a change
//   so its name stays `questions.<n>.options.<m>.…`, the positions the server reads.
// A page script (rendered at the end of the body): a boosted navigation runs it again, so it starts once and then
// sets up what is new on every htmx:load.
(function () {
  if (window.learningStudioLoaded) return
  window.learningStudioLoaded = true

  /** The same slug the server suggests (plugins/learning/pages/studio.ts, slugOf). */
  function slugOf(text) {
    return text.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '').slice(0, 100).replace(/-+$/, '')
  }

  function slugField(slug) {
    if (slug.hasAttribute('data-studio-ready')) return
    slug.setAttribute('data-studio-ready', '')
    var source = document.getElementById(slug.getAttribute('data-slug-from'))
    if (!source) return
    var untouched = slug.value === '' || slug.value === slugOf(source.value)
    source.addEventListener('input', function () {
      if (untouched) slug.value = slugOf(source.value)
    })
    slug.addEventListener('input', function () {
      untouched = slug.value === ''
    })
  }

  // ---- the quiz editor ----

  var ATTRIBUTES = ['id', 'for', 'name', 'aria-describedby']

  function rewrite(root, change) {
    var elements = [root].concat(Array.prototype.slice.call(root.querySelectorAll('[id], [for], [name], [aria-describedby]')))
    elements.forEach(function (el) {
      ATTRIBUTES.forEach(function (name) {
        var value = el.getAttribute(name)
        if (value !== null) el.setAttribute(name, change(value))
      })
    })
  }

  function setNumbers(root, selector, n) {
    root.querySelectorAll(selector).forEach(function (el) { el.textContent = String(n) })
  }

  function children(parent, selector) {
    return parent ? Array.prototype.filter.call(parent.children, function (el) { return el.matches(selector) }) : []
  }

  function quizEditor(quiz) {
    if (quiz.hasAttribute('data-studio-ready')) return
    quiz.setAttribute('data-studio-ready', '')
    var list = quiz.querySelector('[data-studio-questions]')
    var status = quiz.querySelector('[data-studio-quiz-status]')
    var addQuestion = quiz.querySelector('[data-studio-add-question]')
    var questionTemplate = quiz.querySelector('template[data-studio-question-template]')
    var optionTemplate = quiz.querySelector('template[data-studio-option-template]')
    var questionsMax = Number(quiz.getAttribute('data-questions-max')) || 50
    var optionsMax = Number(quiz.getAttribute('data-options-max')) || 10

    function reveal(root) {
      root.querySelectorAll('[data-studio-js]').forEach(function (el) { el.hidden = false })
    }

    function renumber() {
      var questions = children(list, '[data-studio-question]')
      questions.forEach(function (question, i) {
        rewrite(question, function (v) { return v.replace(/studio-q-\d+/g, 'studio-q-' + i).replace(/questions\.\d+/g, 'questions.' + i) })
        setNumbers(question, '[data-q-number]', i + 1)
        var options = children(question.querySelector('[data-studio-options]'), '[data-studio-option]')
        options.forEach(function (option, j) {
          rewrite(option, function (v) { return v.replace(/-o-\d+/g, '-o-' + j).replace(/options\.\d+/g, 'options.' + j) })
          setNumbers(option, '[data-o-number]', j + 1)
        })
        var addOption = question.querySelector('[data-studio-add-option]')
        if (addOption) addOption.disabled = options.length >= optionsMax
      })
      if (addQuestion) addQuestion.disabled = questions.length >= questionsMax
    }

    function say(text) {
      if (status) status.textContent = text
    }

    function clone(template) {
      var el = template.content.firstElementChild.cloneNode(true)
      reveal(el)
      return el
    }

    quiz.addEventListener('click', function (event) {
      var button = event.target.closest('button')
      if (!button || !quiz.contains(button)) return
      var question = button.closest('[data-studio-question]')
      if (button.hasAttribute('data-studio-add-question') && questionTemplate) {
        var added = clone(questionTemplate)
        list.appendChild(added)
        renumber()
        say('Question ' + children(list, '[data-studio-question]').length + ' added.')
        added.querySelector('textarea').focus()
      } else if (button.hasAttribute('data-studio-remove-question') && question) {
        var number = children(list, '[data-studio-question]').indexOf(question) + 1
        question.remove()
        renumber()
        say('Question ' + number + ' removed.')
        if (addQuestion) addQuestion.focus()
      } else if (button.hasAttribute('data-studio-add-option') && question && optionTemplate) {
        var options = question.querySelector('[data-studio-options]')
        var option = clone(optionTemplate)
        options.appendChild(option)
        renumber()
        option.querySelector('input[type=text]').focus()
      } else if (button.hasAttribute('data-studio-remove-option') && question) {
        button.closest('[data-studio-option]').remove()
        renumber()
        var next = question.querySelector('[data-studio-add-option]')
        if (next) next.focus()
      }
    })

    reveal(quiz)
    renumber()
  }

  function setUp(root) {
    if (!root || !root.querySelectorAll) return
    var scope = root.parentElement || root
    scope.querySelectorAll('input[data-slug-from]').forEach(slugField)
    scope.querySelectorAll('[data-studio-quiz]').forEach(quizEditor)
  }

  document.addEventListener('htmx:load', function (event) { setUp(event.detail && event.detail.elt) })
  setUp(document.body)
})()
