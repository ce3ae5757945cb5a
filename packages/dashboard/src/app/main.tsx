/** The dashboard's entry point: build.mjs bundles this file, its imports and their CSS. */
import 'uplot/dist/uPlot.min.css';
import './styles.css';
import { render } from 'preact';
import { App } from './app.js';

const root = document.getElementById('app');
if (root !== null) render(<App />, root);
