import htm from 'htm';
import { h, type VNode } from 'preact';

/**
 * Preact elements from tagged templates: html`<p class="x">${value}</p>`. No JSX, so tsc and jsii
 * compile src/ as plain TypeScript. One root element per template (wrap siblings in a Fragment).
 */
export const html = htm.bind(h) as (strings: TemplateStringsArray, ...values: unknown[]) => VNode;
