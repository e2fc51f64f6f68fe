/** The console's entry: draws the app into the shell page the gateway served. */
import { render } from 'preact';
import { App } from './app';

render(<App />, document.getElementById('app') as HTMLElement);
