import assert from 'node:assert/strict';
import { test } from 'node:test';
import { shortcutAllowed } from './shortcuts';

const el = (tagName: string) => ({ tagName, isContentEditable: false }) as unknown as EventTarget;

test('a shortcut acts on the page, not while typing in a field', () => {
  assert.equal(shortcutAllowed('t', el('BODY'), false), true);
  assert.equal(shortcutAllowed('t', el('INPUT'), false), false);
  // Escape in a field is the field's (it empties a search box): the selection stays.
  assert.equal(shortcutAllowed('Escape', el('INPUT'), false), false);
  assert.equal(shortcutAllowed('Escape', el('BODY'), false), true);
  // A row's checkbox keeps the focus after a click; nothing is typed into it.
  const input = (type: string) => ({ tagName: 'INPUT', type, isContentEditable: false }) as unknown as EventTarget;
  assert.equal(shortcutAllowed('r', input('checkbox'), false), true);
  assert.equal(shortcutAllowed('r', input('text'), false), false);
  assert.equal(shortcutAllowed('r', input('search'), false), false);
});

test('while a modal dialog is open only Escape acts (g w would leave the page and drop what was typed)', () => {
  assert.equal(shortcutAllowed('t', el('BUTTON'), true), false);
  assert.equal(shortcutAllowed('g', el('BUTTON'), true), false);
  assert.equal(shortcutAllowed('Escape', el('BUTTON'), true), true);
});
