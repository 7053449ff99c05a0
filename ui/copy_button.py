"""A one-click "Copy" button for an answer's text.

Streamlit has no copy action for Markdown, so this is a tiny `st.components.v2` component: inline
HTML, CSS and JavaScript registered once, nothing fetched from anywhere. It renders in the app's own
page (not an iframe), so the browser's clipboard API is allowed; where it is not (an http address
other than localhost), the older execCommand("copy") path is used. The text travels as data and is
only ever assigned to the clipboard or a textarea's value, never parsed as HTML.
"""

from __future__ import annotations

import hashlib

import streamlit as st

_HTML = """<button type="button" class="copy" aria-label="Copy the answer" title="Copy the answer">
<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M9 9h10v12H9zM5 3h10v2H7v10H5z"/></svg>
<span>Copy</span></button>"""

_CSS = """
.copy {
  display: inline-flex; align-items: center; gap: 0.35rem;
  padding: 0.25rem 0.6rem; border-radius: 0.5rem; cursor: pointer;
  font: inherit; font-size: 0.875rem; line-height: 1.6;
  color: var(--st-text-color, inherit); background: transparent;
  border: 1px solid var(--st-border-color, rgba(49, 51, 63, 0.2));
}
.copy:hover { border-color: var(--st-primary-color, #ff4b4b); color: var(--st-primary-color, #ff4b4b); }
.copy:focus-visible { outline: 2px solid var(--st-primary-color, #ff4b4b); outline-offset: 1px; }
.copy svg { width: 1rem; height: 1rem; fill: currentColor; }
"""

_JS = """
export default function (component) {
  const { data, parentElement } = component;
  const button = parentElement.querySelector("button.copy");
  const label = button.querySelector("span");
  const text = (data && data.text) || "";
  button.onclick = async () => {
    let copied = false;
    try {
      await navigator.clipboard.writeText(text);
      copied = true;
    } catch (error) {
      const area = document.createElement("textarea");
      area.value = text;
      area.setAttribute("readonly", "");
      area.style.position = "fixed";
      area.style.opacity = "0";
      document.body.appendChild(area);
      area.select();
      copied = document.execCommand("copy");
      area.remove();
    }
    label.textContent = copied ? "Copied" : "Copy failed";
    setTimeout(() => { label.textContent = "Copy"; }, 2000);
  };
}
"""

_copy_component = st.components.v2.component("ragchat.copy_button", html=_HTML, css=_CSS, js=_JS)


def copy_button(text: str, identity: str) -> None:
    """A button that copies `text`. `identity` tells two buttons with the same text apart (Streamlit
    needs a unique key per element); it is hashed, so any string describing the answer will do."""
    key = "copy-" + hashlib.sha256(f"{identity}\n{text}".encode()).hexdigest()[:16]
    _copy_component(data={"text": text}, key=key, width="content")
