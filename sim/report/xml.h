/* xml.h: text escaped for XML reports (JUnit, SVG). */
#ifndef TT_XML_H
#define TT_XML_H

#include <stdio.h>

/* Writes s with <, >, & and " escaped: safe in element text and attribute values. */
void xml_write_text(FILE *f, const char *s);

#endif
