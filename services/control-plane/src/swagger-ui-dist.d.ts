// swagger-ui-dist ships no types; only this helper is imported (the bundle itself runs in the browser).
declare module "swagger-ui-dist/absolute-path.js" {
  /** The directory holding swagger-ui-bundle.js and swagger-ui.css. */
  export default function getAbsoluteFSPath(): string;
}
