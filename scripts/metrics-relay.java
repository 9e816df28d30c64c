/*
 * The metrics relay of a node on a cluster, run in the node's pod from Besu's own image by Java's source launcher
 * (`java metrics-relay.java`, Java 11 and later: every Besu image has one). Besu serves its metrics on the pod's
 * loopback only, and cannot also push them; the networks expect every node to push to their gateway. Every INTERVAL
 * seconds the relay reads Besu's /metrics and pushes exactly that to the gateway as Besu itself would (POST to PUSH_URL,
 * the job being the node's name; the first push half an interval after the start; DELETE when stopped). It also
 * answers GET /metrics on LISTEN_PORT with Besu's metrics of that moment, for the operator's in-cluster Prometheus
 * (which the pod's NetworkPolicy admits by name): Besu's own server checks the Host header against the RPC's
 * allowlist, so a scraper addressing the pod could not read it directly. To them it adds one series of its own, named
 * LAST_PUSH_SERIES: when the gateway last took a push (Unix seconds, 0 before the first), which the alert on a failing
 * push reads.
 *
 * A machine's relay is scripts/metrics-relay.sh, which does the same with curl (a machine's Java runtime may lack the
 * source launcher; Besu's image has no curl).
 */
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

final class MetricsRelay {
  /** Prometheus' text format, as Besu's own push sends it. */
  private static final String TEXT_FORMAT = "text/plain; version=0.0.4";
  private static final String PATH = "/metrics";

  private final HttpClient client;
  private final URI besu;
  private final URI push;
  private final Duration timeout;
  private final String lastPushSeries;
  /** The push's last state, so that a change is said once, not at every interval. */
  private String pushing = "unknown";
  /** When the gateway last took a push, Unix seconds; 0 before the first. */
  private volatile long lastPush = 0;

  private MetricsRelay(URI besu, URI push, int intervalSeconds, String lastPushSeries) {
    this.besu = besu;
    this.push = push;
    this.lastPushSeries = lastPushSeries;
    this.timeout = Duration.ofSeconds(intervalSeconds);
    this.client = HttpClient.newBuilder().connectTimeout(timeout).build();
  }

  private static String setting(String name) {
    String value = System.getenv(name);
    if (value == null || value.isEmpty()) {
      System.err.println("metrics-relay: " + name + " is not set");
      System.exit(2);
    }
    return value;
  }

  public static void main(String[] args) throws IOException {
    int interval = Integer.parseInt(setting("INTERVAL"));
    MetricsRelay relay =
        new MetricsRelay(
            URI.create(setting("BESU_METRICS_URL")),
            URI.create(setting("PUSH_URL")),
            interval,
            setting("LAST_PUSH_SERIES"));
    HttpServer server = HttpServer.create(new InetSocketAddress(Integer.parseInt(setting("LISTEN_PORT"))), 0);
    server.createContext("/", relay::serve);
    server.start();
    ScheduledExecutorService pushes = Executors.newSingleThreadScheduledExecutor();
    long periodMillis = interval * 1000L;
    pushes.scheduleAtFixedRate(relay::pushOnce, periodMillis / 2, periodMillis, TimeUnit.MILLISECONDS);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  pushes.shutdownNow();
                  server.stop(0);
                  relay.withdraw();
                }));
    System.out.println("metrics-relay: serving Besu's metrics on port " + server.getAddress().getPort() + PATH);
  }

  /** Besu's metrics now, or null when Besu does not serve them. */
  private HttpResponse<byte[]> besuMetrics() {
    try {
      HttpRequest request = HttpRequest.newBuilder(besu).timeout(timeout).GET().build();
      HttpResponse<byte[]> response = client.send(request, HttpResponse.BodyHandlers.ofByteArray());
      return response.statusCode() == 200 ? response : null;
    } catch (IOException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  private void pushOnce() {
    HttpResponse<byte[]> metrics = besuMetrics();
    if (metrics == null) {
      say("no-besu", "Besu does not serve its metrics at " + besu + " yet: retrying every " + timeout.getSeconds() + " s");
      return;
    }
    int status;
    try {
      HttpRequest request =
          HttpRequest.newBuilder(push)
              .timeout(timeout)
              .header("Content-Type", TEXT_FORMAT)
              .POST(HttpRequest.BodyPublishers.ofByteArray(metrics.body()))
              .build();
      status = client.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
    } catch (IOException e) {
      status = 0;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return;
    }
    if (status >= 200 && status < 300) {
      lastPush = System.currentTimeMillis() / 1000;
      say("ok", "pushing to " + push);
    } else {
      say(
          "failed",
          "the network's gateway does not take the metrics (" + push + "): retrying every " + timeout.getSeconds() + " s");
    }
  }

  /** Removes the node's series from the gateway, as Besu does when it stops. */
  private void withdraw() {
    try {
      HttpRequest request = HttpRequest.newBuilder(push).timeout(Duration.ofSeconds(5)).DELETE().build();
      client.send(request, HttpResponse.BodyHandlers.discarding());
    } catch (IOException e) {
      // The gateway keeps the last push; nothing more to do while stopping.
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private synchronized void say(String state, String message) {
    if (!state.equals(pushing)) {
      pushing = state;
      System.out.println("metrics-relay: " + message);
    }
  }

  /** GET /metrics: Besu's metrics of this moment; anything else is refused. */
  private void serve(HttpExchange exchange) throws IOException {
    try {
      String method = exchange.getRequestMethod();
      if (!exchange.getRequestURI().getPath().equals(PATH)) {
        answer(exchange, 404, "text/plain", "not found: only " + PATH + "\n");
      } else if (!method.equals("GET") && !method.equals("HEAD")) {
        exchange.getResponseHeaders().set("Allow", "GET, HEAD");
        answer(exchange, 405, "text/plain", "only GET\n");
      } else {
        HttpResponse<byte[]> metrics = besuMetrics();
        if (metrics == null) {
          answer(exchange, 503, "text/plain", "Besu does not serve its metrics\n");
        } else {
          String type = metrics.headers().firstValue("Content-Type").orElse(TEXT_FORMAT);
          answer(exchange, 200, type, withOwnSeries(metrics.body()));
        }
      }
    } finally {
      exchange.close();
    }
  }

  /** Besu's metrics, then the relay's own series. */
  private byte[] withOwnSeries(byte[] besuMetrics) {
    String text = new String(besuMetrics, StandardCharsets.UTF_8);
    StringBuilder out = new StringBuilder(text);
    if (!text.isEmpty() && !text.endsWith("\n")) out.append('\n');
    out.append("# HELP ").append(lastPushSeries).append(" When the network's gateway last took a push.\n");
    out.append("# TYPE ").append(lastPushSeries).append(" gauge\n");
    out.append(lastPushSeries).append(' ').append(lastPush).append('\n');
    return out.toString().getBytes(StandardCharsets.UTF_8);
  }

  private static void answer(HttpExchange exchange, int status, String type, String body) throws IOException {
    answer(exchange, status, type, body.getBytes(StandardCharsets.UTF_8));
  }

  private static void answer(HttpExchange exchange, int status, String type, byte[] body) throws IOException {
    exchange.getResponseHeaders().set("Content-Type", type);
    boolean head = exchange.getRequestMethod().equals("HEAD");
    exchange.sendResponseHeaders(status, head ? -1 : body.length);
    if (!head) {
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    }
  }
}
