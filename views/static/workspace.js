// The clinical workspace's script (the form#ws-form of plugins/clinical/views/workspace.tsx). The page works without
// it: every button posts the form to a page route. With it:
// - Record: the browser's MediaRecorder, with a visible state and the elapsed time; Stop sends the recording to
//   POST /api/transcribe (the transcript is added to the transcript box) and, at the same time, to
//   POST /api/audio-backups, kept until the note is saved. "Transcribe the file" does the same with the chosen file.
// - Write the note, Refine, Shorten, Clarify and Write a handout stream the text from the API (server-sent events):
//   the text grows in its box; Stop writing (or Esc) cancels and leaves the box as it was.
// - Save and Mark as reviewed post the form to their page routes and swap the save state; every 10 seconds a
//   changed note is saved the same way (with the version it was read at). A save over a newer version shows both
//   versions side by side to keep one.
// - Copy note copies to the clipboard, asking first for a note not marked reviewed; the draft banner follows edits.
// - Ctrl+S (Cmd+S) saves; Esc stops writing or recording.
// A page script (rendered at the end of the body): a boosted navigation runs it again, so it starts once and then
// looks for a workspace on every htmx:load.
(function () {
  if (window.clinicalWorkspaceLoaded) return
  window.clinicalWorkspaceLoaded = true

  var AUTOSAVE_MS = 10000
  var STREAM_ACTIONS = ['generate', 'refine', 'shorten', 'clarify', 'handout']
  /** The workspace on the page now, or null. */
  var ws = null

  function pad(n) { return (n < 10 ? '0' : '') + n }
  function clock(ms) {
    var s = Math.max(0, Math.floor(ms / 1000))
    return Math.floor(s / 60) + ':' + pad(s % 60)
  }

  /** What the API's failures of the AI service mean to a clinician (its 5xx bodies say only "Request failed"). */
  var FAILURES = {
    ai_not_configured: 'Note writing is not available: no AI service is configured on this server.',
    ai_unreachable: 'The AI service could not be reached or answered with an error. Try again in a moment.',
    ai_timeout: 'The AI service did not answer in time. Try again in a moment.',
    ai_invalid_output: 'The AI service gave an answer that could not be used. Try again.',
    transcription_unavailable: 'Transcription is not available on this server: type or paste the text instead.',
  }

  /** An API refusal: its message, and the request fields it names. */
  function apiError(status, body) {
    var known = body && body.code && FAILURES[body.code]
    var err = new Error(known || (body && body.error) || (status ? 'The server answered ' + status : 'Request failed'))
    err.status = status
    err.fields = (body && body.fields) || null
    return err
  }

  function sentence(s) { return /[.!?]$/.test(s) ? s : s + '.' }

  function readJson(res) {
    return res.json().catch(function () { return {} })
  }

  /** Reads a server-sent event stream, calling onEvent(name, data) for each event; keep-alive comments are skipped. */
  async function readEvents(body, onEvent) {
    var reader = body.getReader()
    var decoder = new TextDecoder()
    var buffer = ''
    for (;;) {
      var step = await reader.read()
      if (step.done) break
      buffer += decoder.decode(step.value, { stream: true }).replace(/\r\n/g, '\n')
      var end
      while ((end = buffer.indexOf('\n\n')) !== -1) {
        var block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        var name = 'message'
        var data = ''
        block.split('\n').forEach(function (line) {
          if (line.indexOf('event:') === 0) name = line.slice(6).trim()
          else if (line.indexOf('data:') === 0) data += line.slice(5).replace(/^ /, '')
        })
        if (data) onEvent(name, JSON.parse(data))
      }
    }
  }

  function workspace(form) {
    var base = form.getAttribute('data-base') || ''
    var byId = function (id) { return document.getElementById(id) }
    var note = byId('ws-note')
    var transcript = byId('ws-transcript')
    var handout = byId('ws-handout')
    var model = byId('ws-model')
    var label = byId('ws-label')
    var instructions = byId('ws-instructions')
    var language = byId('ws-language')
    var readingLevel = byId('ws-reading-level')
    var audioInput = byId('ws-audio')
    var backupField = byId('ws-backup-ids')
    var flashBox = byId('flash')
    // Each box written by streaming has its Stop button and its status line. The buttons are shown and hidden
    // through a wrapper: a button's own display rule (app.css) would win over `hidden`.
    var streamUi = {
      note: { state: byId('ws-stream-state'), stop: byId('ws-stop'), stopBox: byId('ws-stop-box') },
      handout: { state: byId('ws-handout-state'), stop: byId('ws-handout-stop'), stopBox: byId('ws-handout-stop-box') },
    }
    var recordBox = byId('ws-record-start-box')
    var stopRecordBox = byId('ws-record-stop-box')
    var recorderBox = form.querySelector('.ws-recorder')
    var recordButton = byId('ws-record-start')
    var stopRecordButton = byId('ws-record-stop')
    var recState = byId('ws-rec-state')
    var recTime = byId('ws-rec-time')
    var copyButton = byId('ws-copy')
    var copyState = byId('ws-copy-state')
    var copyConfirm = byId('ws-copy-confirm')

    var dirty = false
    var changes = 0
    var saving = false
    var pendingSave = null
    var paused = false
    var streaming = null
    var recording = null
    var transcribing = false
    var alive = true
    var record = function () { return byId('ws-record') }
    /** The note as it was when marked reviewed; any other text is a draft. */
    var reviewedNote = record() && record().getAttribute('data-status') === 'reviewed' ? note.value : null

    // The controls that need this script.
    Array.prototype.forEach.call(form.querySelectorAll('[data-ws-js]'), function (el) {
      if (el === recorderBox && !(window.MediaRecorder && navigator.mediaDevices && navigator.mediaDevices.getUserMedia)) return
      el.hidden = false
    })

    function say(kind, text) {
      if (!flashBox) return
      flashBox.className = 'flash ' + kind
      flashBox.textContent = text
    }

    function isDraft() { return !(reviewedNote !== null && note.value === reviewedNote) }

    function updateBanner() {
      var hasNote = note.value.trim() !== ''
      byId('ws-no-note').hidden = hasNote
      byId('ws-draft').hidden = !hasNote || !isDraft()
      byId('ws-reviewed').hidden = !hasNote || isDraft()
    }

    function changed() {
      dirty = true
      changes++
    }

    form.addEventListener('input', function (event) {
      if (event.target === audioInput) return
      changed()
      if (event.target === note) updateBanner()
    })
    form.addEventListener('change', function (event) {
      if (event.target === audioInput || event.target.tagName !== 'SELECT') return
      changed()
    })

    // ---- streamed text --------------------------------------------------------------------------------------

    /** The label text of a control, for messages. */
    function labelOf(el) {
      var lab = el && el.id ? document.querySelector('label[for="' + el.id + '"] > span') : null
      return lab ? lab.textContent : ''
    }

    /** The control a request field of the API is about. */
    function controlOf(api) {
      var fields = byId('ws-fields')
      if (api === 'currentDocument' || api === 'document' || api === 'noteText') return note
      if (api === 'model') return model
      if (api === 'instructions') return instructions
      if (fields && api === fields.getAttribute('data-source')) return transcript
      return (fields && fields.querySelector('[data-api="' + api + '"]')) || form.querySelector('[name="' + api + '"]')
    }

    function markFields(fields) {
      Array.prototype.forEach.call(form.querySelectorAll('[aria-invalid="true"]'), function (el) { el.removeAttribute('aria-invalid') })
      if (!fields) return ''
      return Object.keys(fields).map(function (api) {
        var el = controlOf(api)
        if (el) el.setAttribute('aria-invalid', 'true')
        return (labelOf(el) || api) + ': ' + fields[api]
      }).join('; ')
    }

    /** The generation request of the chosen note type, from its fields' data attributes (as the page route builds it). */
    function noteRequest() {
      var fields = byId('ws-fields')
      var body = { model: model.value }
      Array.prototype.forEach.call(fields.querySelectorAll('[data-api]'), function (el) {
        var api = el.getAttribute('data-api')
        if (el.hasAttribute('data-answer')) {
          var answers = body[api] || (body[api] = {})
          if (el.value.trim()) answers[el.getAttribute('data-answer')] = el.value.trim()
        } else if (el.hasAttribute('data-lines')) {
          body[api] = el.value.split(/\r?\n/).map(function (s) { return s.trim() }).filter(Boolean)
        } else {
          body[api] = el.value
        }
      })
      var source = fields.getAttribute('data-source')
      if (source === 'responses') {
        var responses = body.responses || (body.responses = {})
        if (transcript.value.trim()) responses[fields.getAttribute('data-source-answer')] = transcript.value.trim()
        if (Object.keys(responses).length === 0) throw new Error('Write at least one answer, or the interview in the transcript')
      } else if (source) {
        body[source] = transcript.value
      }
      if (Array.isArray(body.milestones) && body.milestones.length === 0) throw new Error('Write at least one milestone')
      return {
        url: fields.getAttribute('data-endpoint'), key: fields.getAttribute('data-key'), body: body, target: note, what: 'the note',
        done: 'The note is written. It is a draft: check it before you use it.',
      }
    }

    function streamRequest(action) {
      var api = base + '/api/'
      var age = form.querySelector('[name="patientAge"]')
      switch (action) {
        case 'generate': return noteRequest()
        case 'refine': return {
          url: api + 'refine', key: 'document', target: note, what: 'the note', done: 'The note is revised: check the changes.',
          body: { currentDocument: note.value, instructions: instructions.value, sourceContext: transcript.value, model: model.value },
        }
        case 'shorten': return {
          url: api + 'shorten', key: 'document', target: note, what: 'the note', done: 'The note is shortened: check that nothing you need is gone.',
          body: { document: note.value, model: model.value },
        }
        case 'clarify': return {
          url: api + 'clarify', key: 'document', target: note, what: 'the note', done: 'The note is clarified: check the places marked [clarify: ...].',
          body: { document: note.value, context: transcript.value, model: model.value },
        }
        case 'handout': {
          var body = { noteText: note.value, language: language.value, readingLevel: readingLevel.value, patientAge: age ? age.value : '' }
          if (model.value) body.model = model.value
          return {
            url: api + 'patient-education', key: 'handout', target: handout, what: 'the handout', body: body,
            done: 'The handout is written: check it before you give it to the patient.',
          }
        }
      }
      return null
    }

    function setStreaming(on, target) {
      var ui = target === handout ? streamUi.handout : streamUi.note
      ui.stopBox.hidden = !on
      Array.prototype.forEach.call(form.querySelectorAll('[data-ws-action]'), function (b) {
        if (STREAM_ACTIONS.indexOf(b.getAttribute('data-ws-action')) !== -1) b.disabled = on
      })
      target.readOnly = on
      if (on) target.setAttribute('aria-busy', 'true'); else target.removeAttribute('aria-busy')
      ui.state.textContent = on ? 'Writing…' : ''
    }

    async function stream(action) {
      if (streaming) return
      var spec
      try {
        spec = streamRequest(action)
      } catch (err) {
        say('error', err.message)
        return
      }
      var target = spec.target
      var before = target.value
      var outcome = ''
      var controller = new AbortController()
      streaming = controller
      setStreaming(true, target)
      markFields(null)
      try {
        var res = await fetch(spec.url, {
          method: 'POST', credentials: 'same-origin', signal: controller.signal,
          headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
          body: JSON.stringify(spec.body),
        })
        if (!res.ok) throw apiError(res.status, await readJson(res))
        var text
        if ((res.headers.get('content-type') || '').indexOf('text/event-stream') === -1) {
          text = (await res.json())[spec.key]
        } else {
          target.value = ''
          await readEvents(res.body, function (name, data) {
            if (name === 'delta') {
              target.value += data.text
              target.scrollTop = target.scrollHeight
            } else if (name === 'done') {
              text = data[spec.key]
            } else if (name === 'error') {
              throw apiError(0, data)
            }
          })
        }
        if (typeof text !== 'string') throw new Error('The answer ended before the text was complete')
        target.value = text
        if (target === note) {
          reviewedNote = null
          updateBanner()
        }
        changed()
        say('ok', spec.done)
        outcome = 'Done.'
      } catch (err) {
        target.value = before
        if (err.name === 'AbortError') {
          say('ok', 'Stopped: ' + spec.what + ' was left as it was.')
          outcome = 'Stopped.'
        } else {
          var fields = markFields(err.fields)
          say('error', sentence(fields ? 'Check the fields: ' + fields : err.message) + ' ' + cap(spec.what) + ' was left as it was.')
          outcome = 'Not written: see the message at the top of the page.'
        }
      } finally {
        streaming = null
        setStreaming(false, target)
        // Said next to the buttons too: the message at the top may be out of view.
        var ui = target === handout ? streamUi.handout : streamUi.note
        ui.state.textContent = outcome
      }
    }

    function cap(s) { return s.charAt(0).toUpperCase() + s.slice(1) }

    var stopStreaming = function () { if (streaming) streaming.abort() }
    streamUi.note.stop.addEventListener('click', stopStreaming)
    streamUi.handout.stop.addEventListener('click', stopStreaming)

    // ---- dictation ------------------------------------------------------------------------------------------

    function backupIds() { return backupField.value ? backupField.value.split(',').filter(Boolean) : [] }
    function addBackup(id) {
      var ids = backupIds()
      ids.push(String(id))
      backupField.value = ids.join(',')
    }
    function removeBackups(sent) {
      backupField.value = backupIds().filter(function (id) { return sent.indexOf(id) === -1 }).join(',')
    }

    function postAudio(path, blob, filename, module) {
      var data = new FormData()
      data.append('audio', blob, filename)
      if (module) data.append('module', module)
      return fetch(base + '/api/' + path, { method: 'POST', body: data, credentials: 'same-origin' }).then(function (res) {
        return readJson(res).then(function (body) {
          if (!res.ok) throw apiError(res.status, body)
          return body
        })
      })
    }

    /** A recording to text (added to the transcript) and to an audio backup, both at once. */
    async function transcribe(blob, filename) {
      if (transcribing) return false
      transcribing = true
      recState.textContent = 'Transcribing…'
      var fields = byId('ws-fields')
      var module = (fields && fields.getAttribute('data-enc-type')) || 'dictation'
      var results = await Promise.allSettled([postAudio('transcribe', blob, filename), postAudio('audio-backups', blob, filename, module)])
      transcribing = false
      var text = results[0]
      var backup = results[1]
      if (text.status === 'fulfilled') {
        var words = text.value.text || ''
        transcript.value = transcript.value.trim() ? transcript.value.replace(/\s+$/, '') + '\n\n' + words : words
        // Kept until the note is saved: only a recording whose words are in the transcript may go then.
        if (backup.status === 'fulfilled') addBackup(backup.value.id)
        changed()
        recState.textContent = 'Transcribed'
        say('ok', 'The recording is transcribed: check the transcript.')
        return true
      }
      recState.textContent = 'Not transcribed: see the message at the top of the page'
      var kept = backup.status === 'fulfilled' ? ' Your recording is kept for 24 hours as an audio backup.' : ''
      say('error', sentence(text.reason.message) + kept)
      return false
    }

    function transcribeFile() {
      var file = audioInput.files && audioInput.files[0]
      if (!file) {
        say('error', 'Choose an audio file to transcribe.')
        audioInput.focus()
        return
      }
      transcribe(file, file.name).then(function (ok) { if (ok) audioInput.value = '' })
    }

    function extensionOf(type) {
      if (type.indexOf('ogg') !== -1) return 'ogg'
      if (type.indexOf('mp4') !== -1) return 'm4a'
      return 'webm'
    }

    async function startRecording() {
      if (recording || transcribing) return
      var media
      try {
        media = await navigator.mediaDevices.getUserMedia({ audio: true })
      } catch (err) {
        say('error', err && err.name === 'NotAllowedError'
          ? 'The microphone is blocked: allow this site to use it in the browser, then press Record again.'
          : 'No microphone could be used: check that one is connected.')
        return
      }
      var types = ['audio/webm;codecs=opus', 'audio/webm', 'audio/ogg;codecs=opus', 'audio/mp4']
      var mime = types.filter(function (t) { return MediaRecorder.isTypeSupported && MediaRecorder.isTypeSupported(t) })[0]
      var recorder = new MediaRecorder(media, mime ? { mimeType: mime } : undefined)
      var chunks = []
      var startedAt = Date.now()
      recorder.addEventListener('dataavailable', function (event) { if (event.data && event.data.size) chunks.push(event.data) })
      recorder.addEventListener('stop', function () {
        media.getTracks().forEach(function (track) { track.stop() })
        clearInterval(recording.ticker)
        recording = null
        recorderBox.classList.remove('ws-recording')
        stopRecordBox.hidden = true
        recordBox.hidden = false
        recordButton.focus()
        var type = recorder.mimeType || mime || 'audio/webm'
        if (!alive) return
        transcribe(new Blob(chunks, { type: type }), 'recording.' + extensionOf(type))
      })
      recorder.start(1000)
      recording = {
        recorder: recorder,
        ticker: setInterval(function () { recTime.textContent = clock(Date.now() - startedAt) }, 500),
      }
      recTime.textContent = '0:00'
      recState.textContent = 'Recording'
      recorderBox.classList.add('ws-recording')
      recordBox.hidden = true
      stopRecordBox.hidden = false
      stopRecordButton.focus()
    }

    function stopRecording() {
      if (recording && recording.recorder.state !== 'inactive') recording.recorder.stop()
    }

    if (recordButton) recordButton.addEventListener('click', startRecording)
    if (stopRecordButton) stopRecordButton.addEventListener('click', stopRecording)

    // ---- saving ---------------------------------------------------------------------------------------------

    function swap(id, html) {
      var old = byId(id)
      if (!old) return null
      var template = document.createElement('template')
      template.innerHTML = html.trim()
      var el = template.content.firstElementChild
      if (!el) return null
      old.replaceWith(el)
      if (window.htmx) window.htmx.process(el)
      return el
    }

    function formBody(submitter) {
      var data = new FormData(form)
      data.delete('audio')
      if (submitter && submitter.name) data.append(submitter.name, submitter.value)
      return new URLSearchParams(data)
    }

    async function save(action, submitter, explicit) {
      if (saving) {
        if (explicit) pendingSave = { action: action, submitter: submitter }
        return
      }
      saving = true
      var seen = changes
      var sentBackups = backupIds()
      var sentNote = note.value
      try {
        var res = await fetch(base + '/workspace/' + action, {
          method: 'POST', credentials: 'same-origin', body: formBody(submitter),
          headers: { 'hx-request': 'true', accept: 'text/html' },
        })
        var html = await res.text()
        if (res.status === 200) {
          swap('ws-record', html)
          swap('ws-conflict', '<div id="ws-conflict"></div>')
          paused = false
          removeBackups(sentBackups)
          if (seen === changes) dirty = false
          var rec = record()
          reviewedNote = rec.getAttribute('data-status') === 'reviewed' ? sentNote : null
          updateBanner()
          label.removeAttribute('aria-invalid')
          if (rec.getAttribute('data-encounter')) history.replaceState(history.state, '', base + '/workspace?encounter=' + rec.getAttribute('data-encounter'))
          if (explicit) say('ok', action === 'review' ? 'Saved and marked as reviewed.' : 'Saved.')
        } else if (res.status === 409) {
          paused = true
          var panel = swap('ws-conflict', html)
          say('error', 'Not saved: this note was changed somewhere else. Compare the two versions and keep one.')
          if (panel) {
            panel.setAttribute('tabindex', '-1')
            panel.focus()
          }
        } else if (res.status === 422) {
          var state = swap('ws-record', html)
          var problem = state && state.querySelector('#ws-save-error')
          if (problem && /label/i.test(problem.textContent)) label.setAttribute('aria-invalid', 'true')
          if (explicit) say('error', 'Not saved: ' + (problem ? problem.textContent : 'check the form.'))
        } else if (res.status === 401) {
          paused = true
          say('error', 'Your session has ended: sign in again in another tab, then save. Your work stays on this page.')
        } else {
          say('error', 'Not saved (the server answered ' + res.status + '). Your work stays on this page.')
        }
      } catch (err) {
        say('error', 'Not saved: no connection. Your work stays on this page.')
      } finally {
        saving = false
        if (pendingSave) {
          var next = pendingSave
          pendingSave = null
          save(next.action, next.submitter, true)
        }
      }
    }

    var autosave = setInterval(function () {
      if (!document.body.contains(form)) return stop()
      if (!dirty || saving || streaming || paused || transcribing || form.classList.contains('htmx-request')) return
      if (!record().getAttribute('data-encounter') && !label.value.trim()) return
      if (!note.value.trim() && !transcript.value.trim()) return
      save('save', null, false)
    }, AUTOSAVE_MS)

    // ---- copy -----------------------------------------------------------------------------------------------

    function copyNote() {
      var done = function () { copyState.textContent = 'Copied.' }
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(note.value).then(done, function () {
          note.select()
          copyState.textContent = 'Copying was refused: the note is selected, press Ctrl+C.'
        })
      } else {
        note.select()
        if (document.execCommand && document.execCommand('copy')) done()
        else copyState.textContent = 'The note is selected: press Ctrl+C to copy it.'
      }
    }
    if (copyButton) {
      copyButton.addEventListener('click', function () {
        copyState.textContent = ''
        if (!note.value.trim()) { copyState.textContent = 'There is no note to copy yet.'; return }
        if (isDraft()) {
          copyConfirm.hidden = false
          byId('ws-copy-anyway').focus()
          return
        }
        copyNote()
      })
      byId('ws-copy-anyway').addEventListener('click', function () {
        copyConfirm.hidden = true
        copyNote()
        copyButton.focus()
      })
      byId('ws-copy-cancel').addEventListener('click', function () {
        copyConfirm.hidden = true
        copyButton.focus()
      })
    }

    function stop() {
      alive = false
      clearInterval(autosave)
      if (streaming) streaming.abort()
      stopRecording()
    }

    updateBanner()

    return {
      form: form,
      stop: stop,
      act: function (action, submitter) {
        if (STREAM_ACTIONS.indexOf(action) !== -1) stream(action)
        else if (action === 'transcribe') transcribeFile()
        else if (action === 'save' || action === 'review') save(action, submitter, true)
      },
      escape: function () {
        if (streaming) { streaming.abort(); return true }
        if (recording) { stopRecording(); return true }
        return false
      },
    }
  }

  function start() {
    var form = document.getElementById('ws-form')
    if (!form) return
    // The fields for a page without JavaScript: htmx parses swapped markup with scripting off, so a <noscript>'s
    // controls would exist (hidden) and be sent; with this script running they are not wanted.
    Array.prototype.forEach.call(form.querySelectorAll('noscript'), function (el) { el.remove() })
    if (form.getAttribute('data-ws-ready')) return
    form.setAttribute('data-ws-ready', '1')
    if (ws) ws.stop()
    ws = workspace(form)
  }

  // The buttons this script handles, before htmx's boost sees the submit; the others (Export, Listen) are htmx's.
  document.addEventListener('submit', function (event) {
    if (!ws || event.target !== ws.form || !document.body.contains(ws.form)) return
    var submitter = event.submitter
    var action = submitter && submitter.getAttribute('data-ws-action')
    if (!action) return
    event.preventDefault()
    event.stopPropagation()
    ws.act(action, submitter)
  }, true)

  document.addEventListener('keydown', function (event) {
    if (!ws || !document.body.contains(ws.form)) return
    if ((event.ctrlKey || event.metaKey) && !event.altKey && (event.key === 's' || event.key === 'S')) {
      event.preventDefault()
      ws.act('save', null)
    } else if (event.key === 'Escape' && ws.escape()) {
      event.preventDefault()
    }
  })

  document.addEventListener('htmx:load', start)
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start)
  else start()
})()
