// A tiny web app for Tidegate's hosting. It serves on $PORT and, once it listens, registers its
// host at $TIDEGATE_REGISTER_URL with $TIDEGATE_HOST_TOKEN: that is what makes a release live, and
// until then the previous release keeps serving. Run on a laptop (`npm start`) it only serves.
const http = require("node:http");

const port = Number(process.env.PORT || 8080);
const host = process.env.TIDEGATE_HOST || "a laptop";

const server = http.createServer((req, res) => {
  res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
  res.end(`hello from ${host}\n`);
});

server.listen(port, async () => {
  console.log(`listening on ${port}`);
  const url = process.env.TIDEGATE_REGISTER_URL;
  if (!url) return;
  const res = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${process.env.TIDEGATE_HOST_TOKEN}` },
  });
  if (!res.ok) {
    console.error(`registering ${host} failed: ${res.status} ${await res.text()}`);
    process.exit(1);
  }
  console.log(`registered ${host}`);
});
