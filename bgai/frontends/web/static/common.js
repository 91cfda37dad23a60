// What both pages share (loaded before app.js and analysis.js): the element lookup and the JSON API call, whose
// error carries the server's detail, the status and, where the tutor refused an action, its warning.
"use strict";

const $ = (id) => document.getElementById(id);

function errorText(body, status) {
  if (body && typeof body.detail === "string") return body.detail;
  if (body && Array.isArray(body.detail)) {
    return body.detail.map((d) => `${(d.loc || []).slice(1).join(".")}: ${d.msg}`).join("; ");
  }
  return `request failed (${status})`;
}

async function api(path, method = "GET", body = undefined) {
  const response = await fetch(path, {
    method,
    headers: body === undefined ? {} : { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = new Error(errorText(data, response.status));
    error.status = response.status;
    error.tutor = data.tutor;  // the tutor's warning, where it refused the action (409)
    throw error;
  }
  return data;
}
