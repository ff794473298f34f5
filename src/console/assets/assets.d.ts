// The console's assets are imported as text (`with { type: 'text' }`), so they are embedded in the binary.
declare module '*.css' {
  const text: string
  export default text
}
declare module 'htmx.org/dist/htmx.min.js' {
  const text: string
  export default text
}
declare module 'uplot/dist/uPlot.iife.min.js' {
  const text: string
  export default text
}
declare module '*/console.js' {
  const text: string
  export default text
}
declare module '*.svg' {
  const text: string
  export default text
}
