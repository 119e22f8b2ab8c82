package io.pmhash.jmh.charts;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.Path2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.imageio.ImageIO;

/**
 * One chart in the manner of the papers' figures: a line chart (a marker per point, one line per
 * series) or a grouped bar chart (a group per category, a bar per series), white background,
 * axes from zero, a legend above the plot and the conditions of the measurement in small type
 * beneath it. Drawn with {@code java.awt} in headless mode and written as PNG.
 */
final class Chart {
  /** Line or grouped bars. */
  enum Kind {
    LINE,
    BARS
  }

  /** One series: for bars, {@code x[i]} is the index of a category. */
  record Series(String name, double[] x, double[] y) {}

  private static final Color[] COLORS = {
    new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c), new Color(0xff7f0e), new Color(0x9467bd),
    new Color(0x8c564b), new Color(0xe377c2), new Color(0x7f7f7f), new Color(0xbcbd22), new Color(0x17becf),
    new Color(0x000000), new Color(0xaec7e8), new Color(0xffbb78), new Color(0x98df8a)
  };
  private static final int WIDTH = 960;
  private static final int PLOT_HEIGHT = 380;

  private final String title;
  private final String xLabel;
  private final String yLabel;
  private final Kind kind;
  private final List<String> categories = new ArrayList<>();
  private final List<Series> series = new ArrayList<>();
  private final List<String> notes = new ArrayList<>();

  Chart(String title, String xLabel, String yLabel, Kind kind) {
    this.title = title;
    this.xLabel = xLabel;
    this.yLabel = yLabel;
    this.kind = kind;
  }

  Chart category(String c) {
    categories.add(c);
    return this;
  }

  Chart series(Series s) {
    series.add(s);
    return this;
  }

  Chart note(String n) {
    notes.add(n);
    return this;
  }

  List<Series> allSeries() {
    return series;
  }

  /**
   * Draws the chart.
   *
   * @param png where to write it
   * @throws IOException if it cannot be written
   */
  void write(Path png) throws IOException {
    Font small = new Font(Font.SANS_SERIF, Font.PLAIN, 12);
    Font label = new Font(Font.SANS_SERIF, Font.PLAIN, 14);
    Font bold = new Font(Font.SANS_SERIF, Font.BOLD, 16);
    // Legend rows first: they decide the top margin.
    BufferedImage probe = new BufferedImage(1, 1, BufferedImage.TYPE_INT_RGB);
    Graphics2D pg = probe.createGraphics();
    pg.setFont(small);
    FontMetrics fm = pg.getFontMetrics();
    List<List<Integer>> rows = new ArrayList<>();
    int x = 0;
    List<Integer> row = new ArrayList<>();
    for (int i = 0; i < series.size(); i++) {
      int w = 34 + fm.stringWidth(series.get(i).name()) + 16;
      if (x + w > WIDTH - 100 && !row.isEmpty()) {
        rows.add(row);
        row = new ArrayList<>();
        x = 0;
      }
      row.add(i);
      x += w;
    }
    if (!row.isEmpty()) {
      rows.add(row);
    }
    pg.dispose();
    int top = 40 + rows.size() * 18 + 10;
    int left = 80;
    int right = 24;
    int bottom = 60;
    int height = top + PLOT_HEIGHT + bottom + notes.size() * 16 + 10;
    BufferedImage img = new BufferedImage(WIDTH, height, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = img.createGraphics();
    g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
    g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
    g.setColor(Color.WHITE);
    g.fillRect(0, 0, WIDTH, height);
    g.setColor(Color.BLACK);
    g.setFont(bold);
    g.drawString(title, left, 24);

    int plotW = WIDTH - left - right;
    int plotBottom = top + PLOT_HEIGHT;
    double yMax = niceMax(max(true));
    double xMin = 0;
    double xMax = kind == Kind.BARS ? categories.size() : niceMax(max(false));
    if (kind == Kind.LINE) {
      double lo = min(false);
      xMin = lo > 0 && lo > xMax / 3 ? niceFloor(lo, xMax) : 0;
    }

    // Grid and y ticks.
    g.setFont(small);
    fm = g.getFontMetrics();
    double yStep = yMax / 5;
    for (int i = 0; i <= 5; i++) {
      double v = i * yStep;
      int py = plotBottom - (int) Math.round(v / yMax * PLOT_HEIGHT);
      g.setColor(new Color(0xE6E6E6));
      g.drawLine(left, py, left + plotW, py);
      g.setColor(Color.BLACK);
      String t = format(v);
      g.drawString(t, left - 6 - fm.stringWidth(t), py + 4);
    }
    // x ticks.
    if (kind == Kind.BARS) {
      double gw = (double) plotW / categories.size();
      for (int c = 0; c < categories.size(); c++) {
        String t = categories.get(c);
        int cx = left + (int) Math.round(gw * (c + 0.5));
        g.drawString(t, cx - fm.stringWidth(t) / 2, plotBottom + 16);
      }
    } else {
      double xStep = (xMax - xMin) / 5;
      for (int i = 0; i <= 5; i++) {
        double v = xMin + i * xStep;
        int px = left + (int) Math.round((v - xMin) / (xMax - xMin) * plotW);
        g.setColor(new Color(0xE6E6E6));
        g.drawLine(px, top, px, plotBottom);
        g.setColor(Color.BLACK);
        String t = format(v);
        g.drawString(t, px - fm.stringWidth(t) / 2, plotBottom + 16);
      }
    }
    // Axes.
    g.setColor(Color.BLACK);
    g.setStroke(new BasicStroke(1.2f));
    g.drawLine(left, top, left, plotBottom);
    g.drawLine(left, plotBottom, left + plotW, plotBottom);
    g.setFont(label);
    fm = g.getFontMetrics();
    g.drawString(xLabel, left + plotW / 2 - fm.stringWidth(xLabel) / 2, plotBottom + 40);
    Graphics2D gy = (Graphics2D) g.create();
    gy.rotate(-Math.PI / 2);
    gy.drawString(yLabel, -(top + PLOT_HEIGHT / 2) - fm.stringWidth(yLabel) / 2, 20);
    gy.dispose();

    // Data.
    g.setStroke(new BasicStroke(2f));
    int n = series.size();
    for (int s = 0; s < n; s++) {
      Series ser = series.get(s);
      Color color = COLORS[s % COLORS.length];
      g.setColor(color);
      if (kind == Kind.BARS) {
        double gw = (double) plotW / categories.size();
        double bw = gw * 0.8 / n;
        for (int i = 0; i < ser.x().length; i++) {
          double v = ser.y()[i];
          if (Double.isNaN(v)) {
            continue;
          }
          int bx = left + (int) Math.round(gw * ser.x()[i] + gw * 0.1 + bw * s);
          int bh = (int) Math.round(v / yMax * PLOT_HEIGHT);
          g.fillRect(bx, plotBottom - bh, Math.max(1, (int) Math.round(bw) - 1), bh);
        }
      } else {
        Path2D line = new Path2D.Double();
        boolean first = true;
        boolean markers = ser.x().length <= 40;
        for (int i = 0; i < ser.x().length; i++) {
          if (Double.isNaN(ser.y()[i])) {
            continue;
          }
          double px = left + (ser.x()[i] - xMin) / (xMax - xMin) * plotW;
          double py = plotBottom - ser.y()[i] / yMax * PLOT_HEIGHT;
          if (first) {
            line.moveTo(px, py);
            first = false;
          } else {
            line.lineTo(px, py);
          }
          if (markers) {
            marker(g, s, px, py);
          }
        }
        g.draw(line);
      }
    }

    // Legend.
    g.setFont(small);
    fm = g.getFontMetrics();
    int ly = 44;
    for (List<Integer> r : rows) {
      int lx = left;
      for (int i : r) {
        g.setColor(COLORS[i % COLORS.length]);
        if (kind == Kind.BARS) {
          g.fillRect(lx, ly - 9, 24, 10);
        } else {
          g.drawLine(lx, ly - 4, lx + 24, ly - 4);
          marker(g, i, lx + 12, ly - 4);
        }
        g.setColor(Color.BLACK);
        g.drawString(series.get(i).name(), lx + 30, ly);
        lx += 34 + fm.stringWidth(series.get(i).name()) + 16;
      }
      ly += 18;
    }

    // Notes: the conditions of the measurement.
    g.setColor(new Color(0x444444));
    int ny = plotBottom + 60;
    for (String note : notes) {
      g.drawString(note, 12, ny);
      ny += 16;
    }
    g.dispose();
    ImageIO.write(img, "png", png.toFile());
  }

  private static void marker(Graphics2D g, int s, double px, double py) {
    int x = (int) Math.round(px);
    int y = (int) Math.round(py);
    switch (s % 4) {
      case 0 -> g.fillOval(x - 4, y - 4, 8, 8);
      case 1 -> g.fillRect(x - 4, y - 4, 8, 8);
      case 2 -> g.fillPolygon(new int[] {x - 5, x + 5, x}, new int[] {y + 4, y + 4, y - 5}, 3);
      default -> g.fillPolygon(new int[] {x, x + 5, x, x - 5}, new int[] {y - 5, y, y + 5, y}, 4);
    }
  }

  private double max(boolean y) {
    double m = 0;
    for (Series s : series) {
      for (double v : y ? s.y() : s.x()) {
        if (!Double.isNaN(v)) {
          m = Math.max(m, v);
        }
      }
    }
    return m;
  }

  private double min(boolean y) {
    double m = Double.MAX_VALUE;
    for (Series s : series) {
      for (double v : y ? s.y() : s.x()) {
        if (!Double.isNaN(v)) {
          m = Math.min(m, v);
        }
      }
    }
    return m == Double.MAX_VALUE ? 0 : m;
  }

  /**
   * The smallest of 1, 1.25, 2, 2.5, 5 times a power of ten that is at least {@code v} (1.25: a
   * load factor of 1.0 gets an axis to 1.25, not 2).
   */
  static double niceMax(double v) {
    if (!(v > 0)) {
      return 1;
    }
    double p = Math.pow(10, Math.floor(Math.log10(v)));
    for (double m : new double[] {1, 1.25, 2, 2.5, 5, 10}) {
      if (m * p >= v * 1.0001) {
        return m * p;
      }
    }
    return 10 * p;
  }

  /** A round lower bound for the x axis (a multiple of a fifth of the range). */
  private static double niceFloor(double lo, double hi) {
    double step = hi / 5;
    return Math.floor(lo / step) * step;
  }

  static String format(double v) {
    double a = Math.abs(v);
    if (a >= 1e9 && v % 1e9 == 0) {
      return String.format(Locale.ROOT, "%.0fG", v / 1e9);
    }
    if (a >= 1e6) {
      return String.format(Locale.ROOT, v % 1e6 == 0 ? "%.0fM" : "%.1fM", v / 1e6);
    }
    if (a >= 1e4) {
      return String.format(Locale.ROOT, v % 1e3 == 0 ? "%.0fK" : "%.1fK", v / 1e3);
    }
    if (a >= 10 || v == Math.rint(v)) {
      return String.format(Locale.ROOT, "%.0f", v);
    }
    return String.format(Locale.ROOT, a >= 1 && v * 10 == Math.rint(v * 10) ? "%.1f" : "%.2f", v);
  }
}
